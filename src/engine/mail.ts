/**
 * SMTP (SPEC 7e): the connections `email` steps (and the invitation mailer) send through. One
 * pooled nodemailer transport per `smtp` credential: up to MAX_CONNECTIONS connections to its
 * server, each reused for up to MAX_MESSAGES messages, closed after SOCKET_IDLE_MS without traffic.
 * A credential is known by its id and the fingerprint of its values: when it is rotated or deleted
 * the executor is told (bus `credential.changed` → `forget`), and a run that brings other values
 * (a notice missed) replaces the pool too; the old pool is closed — its messages in flight finish
 * first — and a new one opened. Pools unused for POOL_IDLE_MS are
 * closed (a deleted credential's too).
 *
 * Network policy: the same as `http` steps' (engine/network.ts). Connections are opened here
 * (nodemailer's `getSocket`) with the guarded DNS lookup, so a host that resolves (or re-resolves)
 * to a loopback, private or link-local address is refused unless
 * HOOKFLOW_ALLOW_PRIVATE_NETWORK=true; TLS is then set up by nodemailer over that socket, checking
 * the certificate against the credential's host.
 *
 * Security modes: `tls` — TLS from the first byte (port 465); `starttls` — plain, then upgraded
 * with STARTTLS, and the message is not sent when the server does not offer it (587); `none` —
 * plain text, STARTTLS not attempted (a relay on the same host or network).
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import type { NetworkPolicy } from './network.js';
import { guardedLookup, NetworkRefused } from './network.js';

/** The values of an `smtp` credential (credentials/model.ts). */
export interface SmtpSettings {
  host: string;
  port: number;
  security: 'tls' | 'starttls' | 'none';
  username?: string;
  password?: string;
  from: string;
}

/** Connections per pool: what one credential may hold open at once (nodemailer's default is 5). */
const MAX_CONNECTIONS = 5;
/** Messages one connection carries before it is replaced (servers limit messages per session). */
const MAX_MESSAGES = 100;
/** Connecting, and the server's greeting (and STARTTLS), each within this. */
export const CONNECT_TIMEOUT_MS = 15_000;
/** A connection silent this long is closed: idle pooled ones, and servers that stop answering. */
const SOCKET_IDLE_MS = 60_000;
/** A pool unused this long is closed when the next message is sent. */
const POOL_IDLE_MS = 10 * 60_000;

type Nodemailer = typeof import('nodemailer');
type Transporter = ReturnType<Nodemailer['createTransport']>;
let nodemailer: Promise<Nodemailer> | undefined;

/** nodemailer, loaded on first use: threads and processes that never send mail do not carry it. */
function loadNodemailer(): Promise<Nodemailer> {
  nodemailer ??= import('nodemailer').catch((err: unknown) => {
    nodemailer = undefined;
    throw err;
  });
  return nodemailer;
}

/** An smtp credential's clear data as settings (validated when it was saved). */
export function smtpSettings(data: Record<string, unknown>): SmtpSettings {
  const s: SmtpSettings = {
    host: String(data.host ?? ''),
    port: Number(data.port),
    security: data.security === 'tls' || data.security === 'none' ? data.security : 'starttls',
    from: String(data.from ?? ''),
  };
  if (typeof data.username === 'string' && data.username !== '') s.username = data.username;
  if (typeof data.password === 'string' && data.password !== '') s.password = data.password;
  return s;
}

/** The clear strings of these settings that must not reach a record or a log (and their AUTH forms). */
export function smtpSecrets(s: SmtpSettings): string[] {
  if (!s.password) return [];
  const plain = Buffer.from(`\0${s.username ?? ''}\0${s.password}`, 'utf8').toString('base64');
  return [s.password, plain];
}

interface Pool {
  fingerprint: string;
  transporter: Transporter;
  usedAt: number;
}

/** The pooled transports of one thread or process; `close()` ends them all. */
export class MailTransports {
  readonly #policy: NetworkPolicy;
  readonly #pools = new Map<string, Pool>();
  #closed = false;

  constructor(policy: NetworkPolicy) {
    this.#policy = policy;
  }

  /** The transport for credential `id` with these settings (a new pool when they changed). */
  async transport(id: string, settings: SmtpSettings): Promise<Transporter> {
    if (this.#closed) throw new Error('The mail transports are closed.');
    const now = Date.now();
    for (const [key, pool] of this.#pools)
      if (key !== id && now - pool.usedAt > POOL_IDLE_MS) {
        this.#pools.delete(key);
        pool.transporter.close();
      }
    const fingerprint = createHash('sha256').update(JSON.stringify(settings)).digest('hex');
    const current = this.#pools.get(id);
    if (current?.fingerprint === fingerprint) {
      current.usedAt = now;
      return current.transporter;
    }
    const { createTransport } = await loadNodemailer();
    // Another send for this credential may have replaced the pool while nodemailer loaded.
    const latest = this.#pools.get(id);
    if (latest?.fingerprint === fingerprint) return latest.transporter;
    // Rotated: the old pool's messages in flight finish, then its connections close.
    latest?.transporter.close();
    const transporter = createTransport(this.#options(settings));
    this.#pools.set(id, { fingerprint, transporter, usedAt: now });
    return transporter;
  }

  /**
   * Credential `id` changed or was deleted (the executor hears it on the bus): its pool closes now
   * rather than at its next message (messages being delivered finish first).
   */
  forget(id: string): void {
    const pool = this.#pools.get(id);
    if (!pool) return;
    this.#pools.delete(id);
    pool.transporter.close();
  }

  /** Closes every pool (messages being delivered finish first). */
  close(): void {
    this.#closed = true;
    for (const pool of this.#pools.values()) pool.transporter.close();
    this.#pools.clear();
  }

  #options(s: SmtpSettings) {
    const policy = this.#policy;
    return {
      pool: true as const,
      maxConnections: MAX_CONNECTIONS,
      maxMessages: MAX_MESSAGES,
      host: s.host,
      port: s.port,
      secure: s.security === 'tls',
      requireTLS: s.security === 'starttls',
      ignoreTLS: s.security === 'none',
      ...(s.username !== undefined ? { auth: { user: s.username, pass: s.password ?? '' } } : {}),
      connectionTimeout: CONNECT_TIMEOUT_MS,
      greetingTimeout: CONNECT_TIMEOUT_MS,
      socketTimeout: SOCKET_IDLE_MS,
      // No DNS lookups of nodemailer's own (it resolves with dns.resolve, unguarded): the socket
      // is opened here, on the guarded lookup.
      getSocket: (
        _options: unknown,
        callback: (err: Error | null, socket?: { connection: net.Socket }) => void,
      ) => {
        connect(s.host, s.port, policy).then(
          (connection) => callback(null, { connection }),
          (err: Error) => callback(err),
        );
      },
      // nodemailer logs nothing (its default), and never the message or the AUTH exchange.
      logger: false,
      debug: false,
    };
  }
}

/** A TCP connection to host:port that the policy allows, within CONNECT_TIMEOUT_MS. */
export function connect(host: string, port: number, policy: NetworkPolicy): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const literal = net.isIP(host) !== 0;
    const why = literal ? policy.refuse(host) : undefined;
    if (why) return reject(new NetworkRefused(host, host, why));
    const socket = net.connect({
      host,
      port,
      ...(literal ? {} : { lookup: guardedLookup(policy) as never }),
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        Object.assign(
          new Error(`${host}:${port} did not accept a connection within ${CONNECT_TIMEOUT_MS} ms`),
          {
            code: 'ETIMEDOUT',
          },
        ),
      );
    }, CONNECT_TIMEOUT_MS);
    const failed = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    socket.once('error', failed);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', failed);
      resolve(socket);
    });
  });
}

/** An SMTP failure in words: the server's reply when it refused ("550 5.1.1 …"), else what failed on the way. */
export function describeSmtpError(err: unknown): string {
  const e = err as {
    message?: string;
    code?: string;
    responseCode?: number;
    response?: string;
    command?: string;
  };
  if (typeof e.responseCode === 'number' && e.responseCode >= 400) {
    const reply = (e.response ?? '').trim() || String(e.responseCode);
    return `the SMTP server refused${e.command ? ` ${e.command}` : ''}: ${reply}`;
  }
  return `${e.message ?? String(err)}${e.code ? ` (${e.code})` : ''}`;
}
