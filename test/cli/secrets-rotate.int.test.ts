/**
 * `hookflow secrets rotate` (issue 19): every secret at rest — a credential, a webhook's basic-auth
 * password in the workflow and in its saved versions — is re-sealed under HOOKFLOW_NEW_ENCRYPTION_KEY;
 * after a restart with the new key the webhook still takes the password and the http step still
 * sends the credential; with the old key they no longer open. With a generated key file, the file
 * is replaced. Running it twice is harmless; a wrong current key changes nothing.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as cli } from '../../src/cli.js';
import { finishedExecution } from '../engine/int-helpers.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { createActiveWorkflow, startTestServer, type TestServer, tempDir } from '../helpers/server.js';

const OLD = 'old-key-0123456789abcdefghijklmnopqrstuv';
const NEW = 'new-key-zyxwvutsrqponmlkjihgfedcba987654';

let receiver: http.Server;
let receiverUrl = '';
const auths: (string | undefined)[] = [];

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    auths.push(req.headers.authorization);
    req.resume();
    res.end('ok');
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
});

/** Runs the CLI with these environment variables set (and put back after). */
async function run(args: string[], env: Record<string, string | undefined>): Promise<number> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await cli(args);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

const start = (dataDir: string, key?: string) =>
  startTestServer({
    dataDir,
    env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true', ...(key ? { HOOKFLOW_ENCRYPTION_KEY: key } : {}) },
  });

/** A credential, and an active workflow behind basic auth whose http step uses it (saved twice: two versions). */
async function setUp(server: TestServer, path: string) {
  const cred = await server.api('POST', '/api/v1/credentials', {
    name: 'api',
    type: 'bearer',
    data: { token: 'rotate-me-token' },
  });
  expect(cred.status).toBe(201);
  const wf = await createActiveWorkflow(server, {
    name: path,
    trigger: {
      path,
      auth: { type: 'basic', username: 'u', password: 'webhook-pass' },
      handshake: 'zoom',
      handshakeToken: 'zoom-rotate-token',
    },
    steps: [{ name: 'call', type: 'http', url: `${receiverUrl}/x`, credential: cred.body.id }],
  });
  await server.api('PATCH', `/api/v1/workflows/${wf.id}`, { name: `${path} v2` });
  await server.api('POST', `/api/v1/workflows/${wf.id}/publish`);
}

async function call(server: TestServer, path: string) {
  const res = await fetch(`${server.url}/webhook/${path}`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from('u:webhook-pass').toString('base64')}` },
  });
  if (res.status !== 200) return { status: res.status, execution: undefined };
  return {
    status: res.status,
    execution: await finishedExecution(server, ((await res.json()) as { executionId: string }).executionId),
  };
}

describe('hookflow secrets rotate', () => {
  it('re-seals credentials and webhook secrets under the new HOOKFLOW_ENCRYPTION_KEY', async () => {
    const dataDir = tempDir();
    let server = await start(dataDir, OLD);
    await setUp(server, 'rotate-env');
    await server.close();

    // Missing or short new key: bad usage, nothing done.
    expect(
      await run(['secrets', 'rotate', '--data-dir', dataDir], {
        HOOKFLOW_ENCRYPTION_KEY: OLD,
        HOOKFLOW_NEW_ENCRYPTION_KEY: 'short',
      }),
    ).toBe(2);
    // A wrong current key: refused, nothing written.
    expect(
      await run(['secrets', 'rotate', '--data-dir', dataDir], {
        HOOKFLOW_ENCRYPTION_KEY: 'wrong-key-00000000000000000000000000000',
        HOOKFLOW_NEW_ENCRYPTION_KEY: NEW,
      }),
    ).toBe(1);
    expect(
      await run(['secrets', 'rotate', '--data-dir', dataDir], {
        HOOKFLOW_ENCRYPTION_KEY: OLD,
        HOOKFLOW_NEW_ENCRYPTION_KEY: NEW,
      }),
    ).toBe(0);
    // Again (e.g. unsure whether it ran): harmless.
    expect(
      await run(['secrets', 'rotate', '--data-dir', dataDir], {
        HOOKFLOW_ENCRYPTION_KEY: OLD,
        HOOKFLOW_NEW_ENCRYPTION_KEY: NEW,
      }),
    ).toBe(0);

    server = await start(dataDir, NEW);
    try {
      // In the audit log as the system's, with counts and never a key.
      const audit = await server.api('GET', '/api/v1/audit?action=secrets.rotate');
      expect(audit.body.items).toHaveLength(2);
      expect(audit.body.items[0]).toMatchObject({ actor: { type: 'system' }, details: { credentials: 1 } });
      expect(JSON.stringify(audit.body)).not.toContain(NEW);
      const { status, execution } = await call(server, 'rotate-env');
      expect(status).toBe(200);
      expect(execution.status).toBe('succeeded');
      expect(auths.at(-1)).toBe('Bearer rotate-me-token');
      // The trigger's handshake token was re-sealed with its auth secrets.
      const check = await fetch(`${server.url}/webhook/rotate-env`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from('u:webhook-pass').toString('base64')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ event: 'endpoint.url_validation', payload: { plainToken: 'p-1' } }),
      });
      expect(await check.json()).toEqual({
        plainToken: 'p-1',
        encryptedToken: createHmac('sha256', 'zoom-rotate-token').update('p-1').digest('hex'),
      });
      // Every saved version opens with the new key too: restoring version 1 and publishing it keeps the password.
      const id = (await server.api('GET', '/api/v1/workflows?limit=1')).body.items[0].id;
      expect((await server.api('POST', `/api/v1/workflows/${id}/versions/1/restore`)).status).toBe(200);
      expect((await server.api('POST', `/api/v1/workflows/${id}/publish`)).status).toBe(200);
      expect((await call(server, 'rotate-env')).status).toBe(200);
    } finally {
      await server.close();
    }

    // The old key no longer opens them.
    server = await start(dataDir, OLD);
    try {
      const res = await fetch(`${server.url}/webhook/rotate-env`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from('u:webhook-pass').toString('base64')}` },
      });
      expect(res.status).not.toBe(200);
    } finally {
      await server.close();
    }
  });

  it('re-seals on PostgreSQL (--database-url) in one transaction', async () => {
    const db = await createTestDatabase();
    try {
      const pgStart = (key: string) =>
        startTestServer({
          env: {
            HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
            HOOKFLOW_DATABASE_URL: db.url,
            HOOKFLOW_ENCRYPTION_KEY: key,
          },
        });
      let server = await pgStart(OLD);
      await setUp(server, 'rotate-pg');
      await server.close();
      expect(
        await run(['secrets', 'rotate', '--database-url', db.url], {
          HOOKFLOW_ENCRYPTION_KEY: OLD,
          HOOKFLOW_NEW_ENCRYPTION_KEY: NEW,
        }),
      ).toBe(0);
      server = await pgStart(NEW);
      try {
        const { status, execution } = await call(server, 'rotate-pg');
        expect(status).toBe(200);
        expect(execution.status).toBe('succeeded');
        expect(auths.at(-1)).toBe('Bearer rotate-me-token');
      } finally {
        await server.close();
      }
    } finally {
      await db.drop();
    }
  });

  it("replaces the data dir's generated key file", async () => {
    const dataDir = tempDir();
    let server = await start(dataDir);
    const keyFile = path.join(dataDir, 'encryption.key');
    const generated = fs.readFileSync(keyFile, 'utf8').trim();
    await setUp(server, 'rotate-file');
    await server.close();

    expect(
      await run(['secrets', 'rotate', '--data-dir', dataDir], {
        HOOKFLOW_ENCRYPTION_KEY: undefined,
        HOOKFLOW_NEW_ENCRYPTION_KEY: NEW,
      }),
    ).toBe(0);
    expect(fs.readFileSync(keyFile, 'utf8').trim()).toBe(NEW);
    expect(fs.readFileSync(keyFile, 'utf8').trim()).not.toBe(generated);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);

    server = await start(dataDir);
    try {
      const { status, execution } = await call(server, 'rotate-file');
      expect(status).toBe(200);
      expect(execution.status).toBe('succeeded');
      expect(auths.at(-1)).toBe('Bearer rotate-me-token');
    } finally {
      await server.close();
    }
  });
});
