/**
 * Refused webhook calls kept in the store (issue 19): listed at once (buffered) and after a
 * restart (written), newest first, at most 50, with no body or credential; on PostgreSQL another
 * process sharing the database lists them too; deleting the workflow deletes them.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  createActiveWorkflow,
  eventually,
  startTestServer,
  type TestServer,
  tempDir,
} from '../helpers/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

const servers: TestServer[] = [];
let db: TestDatabase | undefined;
afterAll(async () => {
  for (const s of servers) await s.close().catch(() => undefined);
  await db?.drop();
});

const wrong = (server: TestServer, path: string, n: number) =>
  fetch(`${server.url}/webhook/${path}`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`u:wrong-${n}-SECRET`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ n, card: 'body-SECRET' }),
  });

const list = async (server: TestServer, id: string) =>
  (await server.api('GET', `/api/v1/workflows/${id}/rejections`)).body.items as Record<string, unknown>[];

describe('rejections in the store', () => {
  it('lists refusals at once and after a restart, newest 50, without bodies or credentials (SQLite)', async () => {
    const dataDir = tempDir();
    let server = await startTestServer({ dataDir });
    servers.push(server);
    const wf = await createActiveWorkflow(server, {
      trigger: { path: 'refused', auth: { type: 'basic', username: 'u', password: 'right' } },
    });
    for (let n = 0; n < 55; n++) expect((await wrong(server, 'refused', n)).status).toBe(401);
    const now = await list(server, wf.id);
    expect(now).toHaveLength(50);
    expect(now[0]).toMatchObject({
      code: 'unauthorized',
      method: 'POST',
      mode: 'production',
      ip: '127.0.0.1',
    });
    expect(JSON.stringify(now)).not.toContain('SECRET');

    await server.close();
    server = await startTestServer({ dataDir });
    servers.push(server);
    const after = await list(server, wf.id);
    expect(after).toHaveLength(50);
    expect(after.map((r) => r.at)).toEqual(now.map((r) => r.at));

    expect((await server.api('DELETE', `/api/v1/workflows/${wf.id}`)).status).toBe(204);
    const left = await server.hookflow.store.db
      .selectFrom('rejections')
      .select('id')
      .where('workflow_id', '=', wf.id)
      .execute();
    expect(left).toEqual([]);
  });

  it('another process on the same PostgreSQL database lists them once written', async () => {
    db = await createTestDatabase();
    const env = {
      HOOKFLOW_DATABASE_URL: db.url,
      HOOKFLOW_ENCRYPTION_KEY: 'test-key-for-postgres-0123456789abcdef',
    };
    const a = await startTestServer({ env });
    servers.push(a);
    const b = await startTestServer({ env });
    servers.push(b);
    const wf = await createActiveWorkflow(a, {
      trigger: { path: 'refused-pg', auth: { type: 'basic', username: 'u', password: 'right' } },
    });
    await eventually(async () => (await wrong(a, 'refused-pg', 1)).status === 401);
    const seen = await eventually(async () => {
      const items = await list(b, wf.id);
      return items.length > 0 ? items : undefined;
    }, 5_000);
    expect(seen[0]).toMatchObject({ code: 'unauthorized', method: 'POST' });
  });
});
