/**
 * SPEC 3.5: when the store cannot take the write — a full disk under SQLite, an unreachable
 * PostgreSQL — a webhook (and the API) answers 503 `store_unavailable` with Retry-After, never a
 * 500 and never a 2xx for what was not committed; `/readyz` answers 503; the log has one line for
 * the outage, not one per request; and once the store takes writes again the same process serves
 * 2xx and `/readyz` 200 by itself, with every acknowledged request's execution stored.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import pino, { type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_ADMIN_URL } from '../helpers/postgres.js';
import {
  createActiveWorkflow,
  eventually,
  startTestServer,
  type TestServer,
  tempDir,
} from '../helpers/server.js';

interface LogLine {
  level: number;
  msg: string;
  err?: { code?: string; message?: string };
}

const OUTAGE = 'the store cannot take writes';
const RECOVERED = 'the store takes writes again';

/** A logger whose lines the test reads (pino writes JSON lines to any object with write()). */
function capturingLogger(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

interface Answer {
  status: number;
  body: { code?: string; message?: string; hint?: string };
  retryAfter: string | null;
  executionId: string | null;
}

async function post(server: TestServer, route: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/webhook/${route}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', ...headers },
    body,
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : {},
    retryAfter: res.headers.get('retry-after'),
    executionId: res.headers.get('x-hookflow-execution-id'),
  } satisfies Answer;
}

function expectStoreUnavailable(answer: Answer): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(503);
  expect(answer.body.code).toBe('store_unavailable');
  expect(answer.body.message).toMatch(/\S/);
  expect(answer.body.hint).toMatch(/Retry-After/);
  expect(answer.retryAfter).toBe('5');
  expect(answer.executionId).toBeNull();
}

async function readyz(server: TestServer): Promise<number> {
  return (await fetch(`${server.url}/readyz`)).status;
}

async function executionCount(server: TestServer, workflowId: string): Promise<number> {
  const row = await server.hookflow.store.db
    .selectFrom('executions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workflow_id', '=', workflowId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const isRoot = process.getuid?.() === 0;

describe('SQLite on a full disk', () => {
  let mountDir: string | undefined;
  let server: TestServer | undefined;
  const { log, lines } = capturingLogger();

  beforeAll(async () => {
    if (!isRoot) {
      console.warn('store-unavailable: not root, so no tmpfs can be mounted: the full-disk test is skipped');
      return;
    }
    mountDir = tempDir('hookflow-full-disk-');
    // A disk of its own to fill: small, so that filling it is quick.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountDir]);
    server = await startTestServer({ dataDir: path.join(mountDir, 'data'), log });
  });

  afterAll(async () => {
    await server?.close();
    if (mountDir) {
      execFileSync('umount', [mountDir]);
      fs.rmdirSync(mountDir);
    }
  });

  it.skipIf(!isRoot)(
    'answers 503 store_unavailable and /readyz 503 while the disk is full, logs it once, and recovers when space returns (needs root to mount a tmpfs; skipped otherwise)',
    async () => {
      const s = server!;
      const plain = await createActiveWorkflow(s, { name: 'plain', trigger: { path: 'plain' } });
      // With an idempotency key the request's writes go through a transaction on the event loop's
      // connection (ingest's callback writes), not the writer thread.
      const keyed = await createActiveWorkflow(s, {
        name: 'keyed',
        trigger: { path: 'keyed', options: { idempotency: { header: 'Idempotency-Key' } } },
      });
      const body = 'x'.repeat(2000);
      const acknowledged: string[] = [];
      const keep = (a: Answer) => {
        expect([200, 503], JSON.stringify(a.body)).toContain(a.status);
        if (a.status === 200) acknowledged.push(a.executionId!);
      };
      keep(await post(s, 'plain', body));
      expect(acknowledged).toHaveLength(1);

      // What is logged from here on (the start logs a warning about the generated encryption key).
      const logged = lines.length;
      // Fill the disk: big writes, then ever smaller ones, until not one more byte fits.
      const filler = path.join(mountDir!, 'filler');
      const fd = fs.openSync(filler, 'w');
      for (const size of [1 << 20, 1 << 12, 1 << 8, 1]) {
        const chunk = Buffer.alloc(size, 1);
        try {
          for (;;) fs.writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        }
      }
      fs.closeSync(fd);

      // Requests go on until one needs space the disk no longer has (the WAL may have some left).
      let refused: Answer | undefined;
      for (let i = 0; i < 2000 && !refused; i++) {
        const a = await post(s, 'plain', body);
        keep(a);
        if (a.status !== 200) refused = a;
      }
      expectStoreUnavailable(refused!);
      // A batch of concurrent requests (one group commit) fails as a whole, each with its 503.
      const together = await Promise.all(Array.from({ length: 20 }, () => post(s, 'plain', body)));
      for (const a of together) {
        keep(a);
        if (a.status !== 200) expectStoreUnavailable(a);
      }
      expectStoreUnavailable(await post(s, 'plain', body));
      expectStoreUnavailable(await post(s, 'keyed', body, { 'idempotency-key': 'k-1' }));
      // An API write gets the same answer from Fastify's error handler.
      const created = await s.api('POST', '/api/v1/workflows', { name: 'late', trigger: { path: 'late' } });
      expect(created.status).toBe(503);
      expect(created.body.code).toBe('store_unavailable');
      expect(created.headers.get('retry-after')).toBe('5');

      expect(await readyz(s)).toBe(503);
      const notReady = await fetch(`${s.url}/api/v1/readyz`);
      expect(notReady.status).toBe(503);
      expect(((await notReady.json()) as { code: string }).code).toBe('not_ready');

      // One line for the outage, naming the database's error; nothing logged per request.
      const outage = lines.filter((l) => l.msg.startsWith(OUTAGE));
      expect(outage).toHaveLength(1);
      expect(outage[0]!.level).toBe(50);
      expect(outage[0]!.err?.code).toMatch(/^SQLITE_(FULL|IOERR)/);
      expect(lines.slice(logged).filter((l) => l.level >= 40 && !l.msg.startsWith(OUTAGE))).toEqual([]);

      // Space returns: the very next request is stored, and the process is ready again.
      fs.rmSync(filler);
      keep(await post(s, 'plain', body));
      expect(acknowledged.at(-1)).not.toBeNull();
      expect(await readyz(s)).toBe(200);
      expect(lines.filter((l) => l.msg.startsWith(RECOVERED))).toHaveLength(1);
      const again = await post(s, 'keyed', body, { 'idempotency-key': 'k-1' });
      expect(again.status).toBe(200);
      expect(
        (await s.api('POST', '/api/v1/workflows', { name: 'late', trigger: { path: 'late' } })).status,
      ).toBe(201);

      // Every 2xx was committed, and nothing else was: the workflow has exactly those executions.
      for (const id of acknowledged) {
        expect((await s.api('GET', `/api/v1/executions/${id}`)).status, id).toBe(200);
      }
      expect(await executionCount(s, plain.id)).toBe(acknowledged.length);
      expect(await executionCount(s, keyed.id)).toBe(1);
      expect(lines.filter((l) => l.msg.startsWith(OUTAGE))).toHaveLength(1);
    },
    60_000,
  );
});

describe('PostgreSQL unreachable', () => {
  let server: TestServer;
  let admin: pg.Client;
  let database: string;
  const { log, lines } = capturingLogger();

  /** Refuse (or allow again) every new connection to the server's database, and end its current ones. */
  async function allowConnections(allow: boolean): Promise<void> {
    await admin.query(`alter database ${database} allow_connections ${allow}`);
    if (!allow) {
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [
        database,
      ]);
    }
  }

  beforeAll(async () => {
    server = await startTestServer({ postgres: true, log });
    database = new URL(server.config.store.databaseUrl!).pathname.slice(1);
    admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
  });

  afterAll(async () => {
    await allowConnections(true);
    await admin?.end();
    await server?.close();
  });

  it('answers 503 store_unavailable and /readyz 503 while the database refuses connections, and recovers by itself', async () => {
    const wf = await createActiveWorkflow(server, { name: 'pg', trigger: { path: 'pg' } });
    const acknowledged: string[] = [];
    const first = await post(server, 'pg', 'a=1');
    expect(first.status).toBe(200);
    acknowledged.push(first.executionId!);

    await allowConnections(false);
    expectStoreUnavailable(
      await eventually(async () => {
        const a = await post(server, 'pg', 'a=2');
        // A request answered before the pool saw its connections end was committed: keep it.
        if (a.status === 200) acknowledged.push(a.executionId!);
        else return a;
      }),
    );
    for (const a of await Promise.all(Array.from({ length: 10 }, () => post(server, 'pg', 'a=3')))) {
      expectStoreUnavailable(a);
    }
    // The API too: a read needs the database as much as a write.
    const listed = await server.api('GET', '/api/v1/workflows');
    expect(listed.status).toBe(503);
    expect(listed.body.code).toBe('store_unavailable');
    expect(await readyz(server)).toBe(503);
    const outage = lines.filter((l) => l.msg.startsWith(OUTAGE));
    expect(outage).toHaveLength(1);
    expect(outage[0]!.level).toBe(50);

    // With no webhook traffic, /readyz itself finds out that the database takes writes again
    // (a load balancer that took the process out sends none).
    await allowConnections(true);
    await eventually(async () => (await readyz(server)) === 200, 15_000);
    expect(lines.filter((l) => l.msg.startsWith(RECOVERED))).toHaveLength(1);
    const after = await post(server, 'pg', 'a=4');
    expect(after.status).toBe(200);
    acknowledged.push(after.executionId!);

    for (const id of acknowledged) {
      expect((await server.api('GET', `/api/v1/executions/${id}`)).status, id).toBe(200);
    }
    expect(await executionCount(server, wf.id)).toBe(acknowledged.length);
    expect(lines.filter((l) => l.msg.startsWith(OUTAGE))).toHaveLength(1);
  }, 60_000);
});
