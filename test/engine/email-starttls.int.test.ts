/**
 * `security: "starttls"` for real: a `hookflow start` process sends through an SMTP server that
 * offers STARTTLS with a self-signed certificate (trusted by the process through
 * NODE_EXTRA_CA_CERTS, as an operator with a private CA would), and refuses mail before the
 * upgrade. A server that does not offer STARTTLS gets nothing: `starttls` never falls back to
 * plain text. (The other tests use `none`: the in-process server's CA store cannot be extended.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { eventually } from '../helpers/server.js';
import { parseMime, selfSignedCertificate, type SmtpTestServer, startSmtpServer } from '../helpers/smtp.js';
import { tempDir } from '../helpers/temp-dir.js';

let tlsServer: SmtpTestServer;
let plainServer: SmtpTestServer;
let proc: ServerProcess;
let token: string;

beforeAll(async () => {
  const cert = selfSignedCertificate();
  tlsServer = await startSmtpServer({
    tls: { key: cert.key, cert: cert.cert },
    auth: { user: 'u', pass: 'tls-pass-123' },
  });
  plainServer = await startSmtpServer();
  const dataDir = tempDir();
  const made = await runCli(['tokens', 'create', '--name', 'starttls'], { HOOKFLOW_DATA_DIR: dataDir });
  expect(made.code).toBe(0);
  token = made.stdout.trim().split('\n').at(-1)!;
  proc = await startServerProcess({
    HOOKFLOW_DATA_DIR: dataDir,
    HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
    HOOKFLOW_LOG_LEVEL: 'warn',
    NODE_EXTRA_CA_CERTS: cert.certFile,
  });
}, 60_000);

afterAll(async () => {
  proc?.child.kill('SIGTERM');
  await proc?.exited;
  await tlsServer?.close();
  await plainServer?.close();
});

async function api(method: string, route: string, body?: unknown) {
  const res = await fetch(`${proc.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: JSON from the API
  return { status: res.status, body: (await res.json()) as any };
}

async function sendThrough(name: string, port: number) {
  const cred = await api('POST', '/api/v1/credentials', {
    name,
    type: 'smtp',
    data: {
      host: '127.0.0.1',
      port,
      security: 'starttls',
      username: 'u',
      password: 'tls-pass-123',
      from: 'a@shop.example',
    },
  });
  expect(cred.status).toBe(201);
  const wf = await api('POST', '/api/v1/workflows', {
    name,
    trigger: { path: name },
    steps: [
      {
        name: 'send',
        type: 'email',
        credential: cred.body.id,
        to: 'x@customer.example',
        subject: 'Over TLS',
        text: 'secret',
      },
    ],
  });
  expect(wf.status).toBe(201);
  expect((await api('POST', `/api/v1/workflows/${wf.body.id}/activate`)).status).toBe(200);
  const res = await fetch(`${proc.url}/webhook/${name}`, { method: 'POST' });
  const { executionId } = (await res.json()) as { executionId: string };
  return eventually(async () => {
    const e = await api('GET', `/api/v1/executions/${executionId}`);
    return ['succeeded', 'failed'].includes(e.body.status) ? e.body : undefined;
  }, 20_000);
}

describe('email over STARTTLS', () => {
  it('upgrades the connection, checks the certificate, logs in and sends', async () => {
    const execution = await sendThrough('tls-mail', tlsServer.port);
    expect(execution.status).toBe('succeeded');
    expect(tlsServer.received).toHaveLength(1);
    expect(tlsServer.received[0]!.secure).toBe(true);
    expect(tlsServer.received[0]!.user).toBe('u');
    expect(parseMime(tlsServer.received[0]!.raw).headers.get('subject')).toBe('Over TLS');
  });

  it('a server without STARTTLS gets nothing: the step fails rather than send in plain text', async () => {
    const execution = await sendThrough('plain-mail', plainServer.port);
    expect(execution.status).toBe('failed');
    expect(execution.error.message).toMatch(/STARTTLS/i);
    expect(plainServer.received).toHaveLength(0);
  });
});
