/**
 * Executions retention (HOOKFLOW_EXECUTIONS_MAX_AGE / _MAX_COUNT): finished executions beyond the
 * limits are deleted with their files, queued and running ones never; and a started server sweeps
 * on its own. On SQLite and PostgreSQL, since the cut-offs are id comparisons in each dialect.
 */
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { nextSweepIn, Retention, uuidV7Floor } from '../../src/queue/retention.js';
import { executionsRepo } from '../../src/store/executions.js';
import type { NewExecutionRow } from '../../src/store/schema.js';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';

const DAY = 86_400_000;
const log = createLogger('silent', 2);

describe.each([
  ['sqlite', false],
  ['postgres', true],
])('retention on %s', (_name, postgres) => {
  let server: TestServer;
  let workflowId: string;

  beforeAll(async () => {
    server = await startTestServer({ postgres });
    workflowId = (await createActiveWorkflow(server, { name: 'kept', trigger: { path: 'kept' } })).id;
  });
  afterAll(async () => {
    await server?.close();
  });

  /** An execution created at `at` (its id carries that time, as every id hookflow makes does). */
  const execution = (at: number, over: Partial<NewExecutionRow> = {}): NewExecutionRow => ({
    id: uuidv7({ msecs: at }),
    workflow_id: workflowId,
    workflow_version: 1,
    mode: 'production',
    status: 'succeeded',
    trigger: '{}',
    steps: '[]',
    error: null,
    attempt: 1,
    retry_of: null,
    run_after: new Date(at).toISOString(),
    locked_until: null,
    locked_by: null,
    created_at: new Date(at).toISOString(),
    started_at: new Date(at).toISOString(),
    finished_at: new Date(at).toISOString(),
    warnings: null,
    ...over,
  });

  const ids = async () =>
    (await server.hookflow.store.db.selectFrom('executions').select('id').orderBy('id').execute()).map(
      (r) => r.id,
    );

  it('deletes finished executions older than the age with their files, and keeps queued, running and waiting ones', async () => {
    const { db } = server.hookflow.store;
    const now = Date.now();
    const old = execution(now - 20 * DAY);
    const oldFailed = execution(now - 15 * DAY, { status: 'failed' });
    const oldQueued = execution(now - 20 * DAY, { status: 'queued', started_at: null, finished_at: null });
    const oldRunning = execution(now - 20 * DAY, { status: 'running', locked_by: 'w', finished_at: null });
    // Accepted 20 days ago and waiting (a `wait` of up to 30 days) until tomorrow.
    const oldWaiting = execution(now - 20 * DAY, {
      status: 'waiting',
      run_after: new Date(now + DAY).toISOString(),
      finished_at: null,
    });
    const recent = execution(now - 13 * DAY);
    for (const row of [old, oldFailed, oldQueued, oldRunning, oldWaiting, recent])
      await executionsRepo.insert(db, row);
    // A small file and one stored in parts (over 1 MiB).
    await server.hookflow.store.transaction((trx) =>
      server.hookflow.store.hot.insertBlobs(
        trx,
        [Buffer.from('a'), Buffer.alloc(2 * 1024 * 1024 + 1, 1)].map((data) => ({
          id: uuidv7(),
          execution_id: old.id,
          sha256: 'x',
          size: data.length,
          mime_type: 'text/plain',
          filename: 'a.txt',
          data,
          created_at: old.created_at,
        })),
      ),
    );
    expect(await db.selectFrom('blob_parts').select('seq').execute()).toHaveLength(3);

    const deleted = await new Retention({
      store: server.hookflow.store,
      log,
      maxAgeMs: 14 * DAY,
      maxCount: undefined,
    }).sweep(now);

    expect(deleted).toBe(2);
    expect(await ids()).toEqual([oldQueued.id, oldRunning.id, oldWaiting.id, recent.id].sort());
    expect(await db.selectFrom('blobs').select('id').where('execution_id', '=', old.id).execute()).toEqual(
      [],
    );
    expect(await db.selectFrom('blob_parts').select('seq').execute()).toEqual([]);
    await db.deleteFrom('executions').execute();
  });

  it('keeps at most maxCount executions, deleting the oldest finished ones', async () => {
    const { db } = server.hookflow.store;
    const now = Date.now();
    // More than one delete batch, so the sweep's batching and its cut-off are both exercised.
    const rows = Array.from({ length: 1_203 }, (_, i) => execution(now - 2_000_000 + i * 1_000));
    // Unfinished, and not due for a year: the server's own worker (it polls every second, and on
    // PostgreSQL runs queued rows in batches) must not finish it while the sweep runs.
    rows[0]!.status = 'waiting';
    rows[0]!.run_after = new Date(now + 365 * 86_400_000).toISOString();
    for (let i = 0; i < rows.length; i += 300) {
      await db
        .insertInto('executions')
        .values(rows.slice(i, i + 300))
        .execute();
    }

    const deleted = await new Retention({
      store: server.hookflow.store,
      log,
      maxAgeMs: undefined,
      maxCount: 200,
    }).sweep(now);

    // The 200 newest stay, and the oldest, unfinished, one too.
    expect(deleted).toBe(1_002);
    expect(await ids()).toEqual([rows[0]!.id, ...rows.slice(-200).map((r) => r.id)]);
    await db.deleteFrom('executions').execute();
  });

  it('sweeps again soon after a sweep that found a batch or more to delete', async () => {
    const { db } = server.hookflow.store;
    const now = Date.now();
    const insert = async (from: number, n: number) => {
      const rows = Array.from({ length: n }, (_, i) => execution(from + i));
      for (let i = 0; i < rows.length; i += 300) {
        await db
          .insertInto('executions')
          .values(rows.slice(i, i + 300))
          .execute();
      }
    };
    const count = async () => (await ids()).length;
    await insert(now - 10_000, 600);
    const retention = new Retention({
      store: server.hookflow.store,
      log,
      maxAgeMs: undefined,
      maxCount: 200,
    });
    retention.start();
    try {
      // The first sweep, at once, deletes 400: a batch or more, so the next one is not 5 s away.
      await eventually(async () => (await count()) === 200, 3_000);
      await insert(now, 400);
      expect(await count()).toBe(600);
      await eventually(async () => (await count()) === 200, 2_000);
    } finally {
      await retention.close();
      await db.deleteFrom('executions').execute();
    }
  });

  it('the age cut-off sorts below every id of that millisecond and above every earlier one', () => {
    const at = Date.parse('2026-11-21T20:00:00.000Z');
    const floor = uuidV7Floor(at);
    expect(uuidv7({ msecs: at }) > floor).toBe(true);
    expect(uuidv7({ msecs: at - 1 }) < floor).toBe(true);
  });
});

describe('the time to the next sweep', () => {
  it('is the interval after a sweep with less than a batch to delete, a quarter second after more', () => {
    expect(nextSweepIn(0, 5_000)).toBe(5_000);
    expect(nextSweepIn(199, 5_000)).toBe(5_000);
    expect(nextSweepIn(200, 5_000)).toBe(250);
    expect(nextSweepIn(10_000, 100)).toBe(100);
  });
});

describe('a server with HOOKFLOW_EXECUTIONS_MAX_AGE', () => {
  let server: TestServer;
  afterAll(async () => {
    await server?.close();
  });

  it('deletes its finished executions once they are older than the age', async () => {
    server = await startTestServer({ env: { HOOKFLOW_EXECUTIONS_MAX_AGE: '1s' } });
    const wf = await createActiveWorkflow(server, { name: 'short', trigger: { path: 'short' } });
    const sent = await Promise.all(
      [1, 2, 3].map((n) => fetch(`${server.url}/webhook/short`, { method: 'POST', body: `n=${n}` })),
    );
    expect(sent.map((r) => r.status)).toEqual([200, 200, 200]);
    const list = async () =>
      (await server.api('GET', `/api/v1/executions?workflowId=${wf.id}`)).body.items as unknown[];
    expect(await list()).toHaveLength(3);
    await eventually(async () => (await list()).length === 0, 5_000);
  });
});
