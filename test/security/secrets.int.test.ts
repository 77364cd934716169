import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { ConfigError } from '../../src/config.js';
import { SecretBox } from '../../src/security/secrets.js';
import { json, startTestServer, type TestServer, tempDir } from '../helpers/server.js';

const PASSWORD = 'pa55-w0rd-that-must-not-leak';
const BEARER = 'Bearer tok-that-must-not-leak-either';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

async function executionCount(): Promise<number> {
  const rows = await server.hookflow.store.db.selectFrom('executions').select('id').execute();
  return rows.length;
}

describe('secrets at rest', () => {
  it('never returns a secret, keeps it when "***" is sent back, and verifies with it', async () => {
    const created = await server.api('POST', '/api/v1/workflows', {
      name: 'secret',
      trigger: { path: 'secret', auth: { type: 'basic', username: 'alice', password: PASSWORD } },
    });
    expect(created.status).toBe(201);
    expect(created.body.trigger.auth).toEqual({ type: 'basic', username: 'alice', password: '***' });
    const id = created.body.id;
    await server.api('POST', `/api/v1/workflows/${id}/activate`);

    // A GET result PUT back unchanged keeps the secret.
    const got = (await server.api('GET', `/api/v1/workflows/${id}`)).body;
    expect(JSON.stringify(got)).not.toContain(PASSWORD);
    const put = await server.api('PUT', `/api/v1/workflows/${id}`, {
      name: got.name,
      trigger: got.trigger,
      steps: got.steps,
    });
    expect(put.status).toBe(200);
    const patched = await server.api('PATCH', `/api/v1/workflows/${id}`, {
      trigger: { auth: { type: 'basic', username: 'alice', password: '***' } },
    });
    expect(patched.status).toBe(200);

    const ok = await fetch(`${server.url}/webhook/secret`, {
      method: 'POST',
      headers: { authorization: basic('alice', PASSWORD) },
      body: 'a=1',
    });
    expect(ok.status).toBe(200);
    const execution = await json(
      await fetch(`${server.url}/api/v1/executions/${(await json(ok)).executionId}`, {
        headers: { authorization: `Bearer ${server.token}` },
      }),
    );
    expect(execution.trigger.headers.authorization).toBe('***');

    const before = await executionCount();
    const denied = await fetch(`${server.url}/webhook/secret`, {
      method: 'POST',
      headers: { authorization: basic('alice', 'wrong') },
      body: 'a=1',
    });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expect((await json(denied)).code).toBe('unauthorized');
    const missing = await fetch(`${server.url}/webhook/secret`, { method: 'POST', body: 'a=1' });
    expect(missing.status).toBe(401);
    expect(await executionCount()).toBe(before);
  });

  it('refuses "***" when there is no stored secret to keep', async () => {
    const res = await server.api('POST', '/api/v1/workflows', {
      name: 'mask',
      trigger: { auth: { type: 'header', name: 'Authorization', value: '***' } },
    });
    expect(res.status).toBe(400);
    expect(res.body.fields[0].field).toBe('/trigger/auth/value');
  });

  it('keeps no secret in clear in the database files', async () => {
    await server.api('POST', '/api/v1/workflows', {
      name: 'header',
      trigger: { path: 'header-auth', auth: { type: 'header', name: 'Authorization', value: BEARER } },
    });
    const files = fs.readdirSync(server.dataDir).filter((f) => f.startsWith('hookflow.sqlite'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = fs.readFileSync(path.join(server.dataDir, file));
      expect(bytes.includes(PASSWORD)).toBe(false);
      expect(bytes.includes(BEARER)).toBe(false);
    }
    const stored = await server.hookflow.store.db.selectFrom('workflows').select('trigger').execute();
    expect(stored.some((r) => r.trigger.includes('enc:v1:'))).toBe(true);
  });
});

describe('SecretBox', () => {
  it('round-trips, uses a fresh IV each time, and refuses another key', () => {
    const box = SecretBox.fromPassphrase('a'.repeat(32));
    const a = box.seal('hello');
    const b = box.seal('hello');
    expect(a).not.toBe(b);
    expect(box.reveal(a)).toBe('hello');
    expect(() => SecretBox.fromPassphrase('b'.repeat(32)).reveal(a)).toThrow(/HOOKFLOW_ENCRYPTION_KEY/);
  });
});

describe('SecretBox.load', () => {
  const silent = pino({ level: 'silent' });
  const config = (dataDir: string, extra: { databaseUrl?: string; encryptionKey?: string } = {}) => ({
    security: { encryptionKey: extra.encryptionKey },
    store: { dataDir, databaseUrl: extra.databaseUrl, sqliteSynchronous: 'FULL' as const },
  });

  it('generates a key once for an embedded store and reads it back', () => {
    const dir = tempDir();
    const sealed = SecretBox.load(config(dir), silent).seal('x');
    expect(fs.existsSync(path.join(dir, 'encryption.key'))).toBe(true);
    expect(SecretBox.load(config(dir), silent).reveal(sealed)).toBe('x');
  });

  it('refuses to generate one for a shared PostgreSQL store, naming the setting', () => {
    const dir = tempDir();
    const load = () => SecretBox.load(config(dir, { databaseUrl: 'postgres://u@h/db' }), silent);
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/HOOKFLOW_ENCRYPTION_KEY is required with HOOKFLOW_DATABASE_URL/);
    expect(fs.existsSync(path.join(dir, 'encryption.key'))).toBe(false);
  });

  it('on PostgreSQL uses the configured key, or a key file already in the data dir', () => {
    const key = 'k'.repeat(32);
    const sealed = SecretBox.fromPassphrase(key).seal('x');
    const dir = tempDir();
    const pgUrl = 'postgres://u@h/db';
    expect(
      SecretBox.load(config(dir, { databaseUrl: pgUrl, encryptionKey: key }), silent).reveal(sealed),
    ).toBe('x');
    fs.writeFileSync(path.join(dir, 'encryption.key'), `${key}\n`);
    expect(SecretBox.load(config(dir, { databaseUrl: pgUrl }), silent).reveal(sealed)).toBe('x');
  });
});
