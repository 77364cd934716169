/**
 * A real SMTP server (the `smtp-server` package) on loopback, for `email` steps and the invitation
 * mailer to send to: it keeps every message it takes (envelope and raw bytes), and refuses what a
 * test scripts (a recipient, a message, the next N messages with a transient reply). A small MIME
 * reader takes the received message apart so tests compare headers, bodies and attachments byte
 * for byte.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The message as it arrived (after DATA), CRLF line ends. */
  raw: Buffer;
  user?: string;
  secure: boolean;
}

/** A reply that refuses: `code` and `text` (sent as `<code> <text>`). */
export interface Refusal {
  code: number;
  text: string;
}

export interface SmtpTestServer {
  host: string;
  port: number;
  received: ReceivedMail[];
  /** Refuse RCPT TO of this address (until deleted). */
  refuseRecipient: Map<string, Refusal>;
  /** Refuse the next messages at the end of DATA, one refusal each, in order. */
  refuseData: Refusal[];
  /** Connections opened so far. */
  connections: number;
  close(): Promise<void>;
}

export interface SmtpTestOptions {
  /** `{user, pass}` to require AUTH (PLAIN/LOGIN) with these; absent: no AUTH offered. */
  auth?: { user: string; pass: string };
  /** Offer STARTTLS with this key and certificate (and refuse mail before it); absent: plain only. */
  tls?: { key: Buffer; cert: Buffer };
}

export async function startSmtpServer(options: SmtpTestOptions = {}): Promise<SmtpTestServer> {
  const received: ReceivedMail[] = [];
  const refuseRecipient = new Map<string, Refusal>();
  const refuseData: Refusal[] = [];
  const refusal = (r: Refusal) => Object.assign(new Error(r.text), { responseCode: r.code });
  const state = { connections: 0 };
  const config: SMTPServerOptions = {
    logger: false,
    // Asked for by name: an HTTP step must not reach it by accident.
    banner: 'hookflow test SMTP',
    size: 60 * 1024 * 1024,
    // Pooled clients keep connections open; closing the server ends them after this.
    closeTimeout: 200,
    ...(options.auth ? { authMethods: ['PLAIN', 'LOGIN'] } : { authOptional: true }),
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : { disabledCommands: ['STARTTLS'] }),
    onConnect(_session, callback) {
      state.connections++;
      callback();
    },
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass)
        return callback(null, { user: auth.username });
      callback(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
    },
    onMailFrom(_address, session, callback) {
      if (options.tls && !session.secure)
        return callback(refusal({ code: 530, text: '5.7.0 Must issue a STARTTLS command first' }));
      if (options.auth && !session.user)
        return callback(refusal({ code: 530, text: '5.7.0 Authentication required' }));
      callback();
    },
    onRcptTo(address, _session, callback) {
      const r = refuseRecipient.get(address.address);
      callback(r ? refusal(r) : undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const r = refuseData.shift();
        if (r) return callback(refusal(r));
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((a) => a.address),
          raw: Buffer.concat(chunks),
          ...(typeof session.user === 'string' ? { user: session.user } : {}),
          secure: session.secure,
        });
        callback(null, `2.0.0 Ok: queued as ${received.length}`);
      });
    },
  };
  const server = new SMTPServer(config);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    received,
    refuseRecipient,
    refuseData,
    get connections() {
      return state.connections;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A self-signed certificate for 127.0.0.1 and localhost (openssl), and the file it is in (a CA for NODE_EXTRA_CA_CERTS). */
export function selfSignedCertificate(): { key: Buffer; cert: Buffer; certFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'hookflow-smtp-tls-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyFile), cert: readFileSync(certFile), certFile };
}

export interface MimePart {
  headers: Map<string, string>;
  /** The decoded body (base64 and quoted-printable undone). */
  body: Buffer;
  parts: MimePart[];
}

/** A received message taken apart: headers (unfolded, names lower-cased), body, nested parts. */
export function parseMime(raw: Buffer): MimePart {
  const text = raw.toString('latin1');
  const split = text.indexOf('\r\n\r\n');
  const head = split === -1 ? text : text.slice(0, split);
  const bodyText = split === -1 ? '' : text.slice(split + 4);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const type = headers.get('content-type') ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (type.toLowerCase().startsWith('multipart/') && boundary) {
    const pieces = bodyText.split(`--${boundary}`);
    const parts = pieces
      .slice(1)
      .filter((p) => !p.startsWith('--'))
      .map((p) => parseMime(Buffer.from(p.replace(/^\r\n/, '').replace(/\r\n$/, ''), 'latin1')));
    return { headers, body: Buffer.alloc(0), parts };
  }
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  let body: Buffer;
  if (encoding === 'base64') body = Buffer.from(bodyText.replace(/\s+/g, ''), 'base64');
  else if (encoding === 'quoted-printable')
    body = Buffer.from(
      bodyText
        .replace(/=\r\n/g, '')
        .replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
      'latin1',
    );
  else body = Buffer.from(bodyText.replace(/\r\n$/, ''), 'latin1');
  return { headers, body, parts: [] };
}

/** Every leaf part of a message, depth first. */
export function leaves(part: MimePart): MimePart[] {
  return part.parts.length === 0 ? [part] : part.parts.flatMap(leaves);
}
