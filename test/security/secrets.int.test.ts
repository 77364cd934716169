import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { ConfigError } from '../../src/config.js';
import { SecretBox } from '../../src/security/secrets.js';
import { workflowsRepo } from '../../src/store/workflows.js';
import type { WebhookTrigger } from '../../src/model/workflow.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { runCli } from '../helpers/process.js';
import { createActiveWorkflow, json, startTestServer, type TestServer, tempDir } from '../helpers/server.js';

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

/** The auth object as stored in the workflows row (secrets sealed). */
async function storedAuth(store: TestServer['hookflow']['store'], id: string) {
  const row = await store.db
    .selectFrom('workflows')
    .select('trigger')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return JSON.parse(row.trigger).auth as Record<string, string>;
}

describe('secrets are sealed exactly once (issue 14)', () => {
  it('PATCHes that do not resend the secret keep the stored value and the real password', async () => {
    const wf = await createActiveWorkflow(server, {
      name: 'patched',
      trigger: { path: 'patched', auth: { type: 'basic', username: 'bob', password: PASSWORD } },
    });
    const sealed = (await storedAuth(server.hookflow.store, wf.id)).password;
    expect(SecretBox.isSealed(sealed)).toBe(true);
    const saves: [string, string, unknown][] = [
      ['PATCH', 'name', { name: 'renamed 1' }],
      ['PATCH', 'name', { name: 'renamed 2' }],
      ['PATCH', 'name', { name: 'renamed 3' }],
      ['PATCH', 'steps', { steps: [{ name: 'tag', type: 'set', fields: { tagged: 'yes' } }] }],
      ['PATCH', 'options', { trigger: { options: { maxBodyBytes: 65_536 } } }],
      ['PATCH', 'username', { trigger: { auth: { username: 'bob' } } }],
    ];
    for (const [method, what, body] of saves) {
      const res = await server.api(method, `/api/v1/workflows/${wf.id}`, body);
      expect(res.status, `${what} ${JSON.stringify(res.body)}`).toBe(200);
      expect((await storedAuth(server.hookflow.store, wf.id)).password, what).toBe(sealed);
    }
    // A GET result PUT back, then deactivate and activate again: still the same sealed value.
    const got = (await server.api('GET', `/api/v1/workflows/${wf.id}`)).body;
    const put = await server.api('PUT', `/api/v1/workflows/${wf.id}`, {
      name: got.name,
      trigger: got.trigger,
      steps: got.steps,
    });
    expect(put.status).toBe(200);
    await server.api('POST', `/api/v1/workflows/${wf.id}/deactivate`);
    await server.api('POST', `/api/v1/workflows/${wf.id}/activate`);
    expect((await storedAuth(server.hookflow.store, wf.id)).password).toBe(sealed);

    const ok = await fetch(`${server.url}/webhook/patched`, {
      method: 'POST',
      headers: { authorization: basic('bob', PASSWORD) },
      body: 'a=1',
    });
    expect(ok.status).toBe(200);
  });

  it('an import holding an already-sealed value (a database dump) keeps it sealed once', async () => {
    const wf = await createActiveWorkflow(server, {
      name: 'dumped',
      trigger: { path: 'dumped', auth: { type: 'header', name: 'X-Key', value: BEARER } },
    });
    const sealed = (await storedAuth(server.hookflow.store, wf.id)).value!;
    // A dump of the workflows table holds the sealed value; `hookflow workflows import` it back.
    const file = path.join(tempDir(), 'dump.json');
    fs.writeFileSync(
      file,
      JSON.stringify([
        {
          id: wf.id,
          name: 'dumped',
          trigger: { path: 'dumped', auth: { type: 'header', name: 'X-Key', value: sealed } },
        },
      ]),
    );
    const imported = await runCli(['workflows', 'import', file], { HOOKFLOW_DATA_DIR: server.dataDir });
    expect(imported.code, imported.stderr).toBe(0);
    expect((await storedAuth(server.hookflow.store, wf.id)).value).toBe(sealed);
    // The running server reloads its trigger from the store when told (another process's bus would).
    await server.api('PATCH', `/api/v1/workflows/${wf.id}`, { name: 'dumped again' });
    const ok = await fetch(`${server.url}/webhook/dumped`, {
      method: 'POST',
      headers: { 'x-key': BEARER },
      body: 'a=1',
    });
    expect(ok.status).toBe(200);
  });

  it('a client value that only looks sealed is a literal password, sealed like any other', async () => {
    const literal = 'enc:v1:not-really-sealed';
    const wf = await createActiveWorkflow(server, {
      name: 'literal',
      trigger: { path: 'literal', auth: { type: 'basic', username: 'eve', password: literal } },
    });
    expect((await storedAuth(server.hookflow.store, wf.id)).password).not.toBe(literal);
    const ok = await fetch(`${server.url}/webhook/literal`, {
      method: 'POST',
      headers: { authorization: basic('eve', literal) },
      body: 'a=1',
    });
    expect(ok.status).toBe(200);
  });
});

describe('start-up repair of secrets sealed more than once', () => {
  const KEY = 'repair-test-key-0123456789abcdef0123';

  async function repairs(postgres: boolean) {
    const dataDir = tempDir();
    const db = postgres ? await createTestDatabase() : undefined;
    const env = {
      HOOKFLOW_ENCRYPTION_KEY: KEY,
      ...(db ? { HOOKFLOW_DATABASE_URL: db.url } : {}),
    };
    const box = SecretBox.fromPassphrase(KEY);
    let first: TestServer | undefined;
    let second: TestServer | undefined;
    try {
      first = await startTestServer({ dataDir, env });
      const basicWf = await createActiveWorkflow(first, {
        name: 'broken basic',
        trigger: { path: 'broken-basic', auth: { type: 'basic', username: 'ann', password: PASSWORD } },
      });
      const headerWf = await createActiveWorkflow(first, {
        name: 'broken header',
        trigger: { path: 'broken-header', auth: { type: 'header', name: 'X-Key', value: BEARER } },
      });
      const intact = await createActiveWorkflow(first, {
        name: 'intact',
        trigger: { path: 'intact', auth: { type: 'basic', username: 'ann', password: PASSWORD } },
      });
      // What the bug did on every PATCH: seal the stored (sealed) value again — three saves here.
      for (const [id, field] of [
        [basicWf.id, 'password'],
        [headerWf.id, 'value'],
      ] as const) {
        const workflow = (await workflowsRepo.get(first.hookflow.store.db, id))!;
        const auth = (workflow.trigger as WebhookTrigger).auth as Record<string, string>;
        let value = auth[field]!;
        for (let i = 0; i < 3; i++) value = box.seal(value);
        auth[field] = value;
        await workflowsRepo.update(first.hookflow.store.db, workflow, false);
        // The bug sealed the history row of each save too; repair leaves history rows as they are.
        await first.hookflow.store.db
          .updateTable('workflow_versions')
          .set({ definition: JSON.stringify(workflow) })
          .where('workflow_id', '=', id)
          .where('version', '=', workflow.version)
          .execute();
      }
      const intactBefore = (await storedAuth(first.hookflow.store, intact.id)).password;
      await first.close();
      first = undefined;

      second = await startTestServer({ dataDir, env });
      const s = second;
      const call = (path: string, headers: Record<string, string>) =>
        fetch(`${s.url}/webhook/${path}`, { method: 'POST', headers, body: 'a=1' });
      expect((await call('broken-basic', { authorization: basic('ann', PASSWORD) })).status).toBe(200);
      expect((await call('broken-header', { 'x-key': BEARER })).status).toBe(200);
      expect((await call('intact', { authorization: basic('ann', PASSWORD) })).status).toBe(200);
      const repaired = (await storedAuth(s.hookflow.store, basicWf.id)).password!;
      expect(box.reveal(repaired)).toBe(PASSWORD);
      expect(box.reveal((await storedAuth(s.hookflow.store, headerWf.id)).value!)).toBe(BEARER);
      expect((await storedAuth(s.hookflow.store, intact.id)).password).toBe(intactBefore);
      // A draft saved now leaves production on the published version, read from its history row
      // (still sealed more than once): it must verify with the real password all the same.
      const draft = await s.api('PATCH', `/api/v1/workflows/${basicWf.id}`, { name: 'draft' });
      expect(draft.body).toMatchObject({ version: 2, publishedVersion: 1 });
      expect((await call('broken-basic', { authorization: basic('ann', PASSWORD) })).status).toBe(200);
      await second.close();
      second = undefined;

      // Idempotent: another start leaves the repaired value exactly as it is.
      second = await startTestServer({ dataDir, env });
      expect((await storedAuth(second.hookflow.store, basicWf.id)).password).toBe(repaired);
    } finally {
      await first?.close();
      await second?.close();
      await db?.drop();
    }
  }

  it('repairs SQLite rows', () => repairs(false));
  it('repairs PostgreSQL rows', () => repairs(true));
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

  it('seals once: a value it sealed is kept, layers added by sealing again are peeled', () => {
    const box = SecretBox.fromPassphrase('a'.repeat(32));
    const once = box.seal('hello');
    expect(box.sealOnce(once)).toBe(once);
    expect(box.innermost(once)).toBe(once);
    const thrice = box.seal(box.seal(once));
    expect(box.innermost(thrice)).toBe(once);
    expect(box.sealOnce(thrice)).toBe(once);
    // Sealed with another key, or only looking sealed: a plain value to this box.
    const foreign = SecretBox.fromPassphrase('b'.repeat(32)).seal('x');
    expect(box.innermost(foreign)).toBe(foreign);
    expect(box.reveal(box.sealOnce(foreign))).toBe(foreign);
    expect(box.reveal(box.sealOnce('enc:v1:'))).toBe('enc:v1:');
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
