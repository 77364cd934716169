/**
 * Waiting executions in the queue (SPEC 7b `wait`, issue 18), on SQLite and PostgreSQL: a result
 * the engine parks is recorded `waiting` with its due time and checkpoint, holds no lease, is not
 * claimed before it is due, is claimed by any worker once it is, and keeps its checkpoint and its
 * records through a crash of the resumed attempt (lease lapse) or a failed write (retryLater), so
 * the steps before the wait never run again. A finished result drops the checkpoint, its parts too.
 * The records so far are in the checkpoint's parts (engine/checkpoint.ts), not in `steps`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { Queue } from '../../src/queue/queue.js';
import { executionsRepo, queuedExecution } from '../../src/store/executions.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

const log = createLogger('silent', 2);

describe.each([
  ['sqlite', false],
  ['postgres', true],
])('waiting executions on %s', (_name, postgres) => {
  let store: Store;
  let pg: TestDatabase | undefined;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookflow-waiting-'));
    pg = postgres ? await createTestDatabase() : undefined;
    const config = loadConfig({
      env: { HOOKFLOW_DATA_DIR: dataDir, ...(pg ? { HOOKFLOW_DATABASE_URL: pg.url } : {}) },
    });
    store = await openStore(config.store, log);
  });
  afterAll(async () => {
    await store?.close();
    await pg?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** A queued execution; the queue claims only what is due, so tests see just their own rows. */
  async function queued(): Promise<string> {
    const id = newId();
    await executionsRepo.insert(
      store.db,
      queuedExecution({
        id,
        workflow_id: 'wf',
        workflow_version: 1,
        mode: 'production',
        trigger: '{"body":{"n":1}}',
        created_at: new Date(clock.now()).toISOString(),
      }),
    );
    return id;
  }

  const before = [{ name: 'first', type: 'set', status: 'succeeded', output: { a: 1 } }];
  /** A park's checkpoint as the engine writes it: a head (opaque to the queue) and a first part. */
  const checkpoint = {
    head: '{"at":1,"outputs":[{"a":1}]}',
    seq: 1,
    part: {
      state: '{"values":[],"outputs":[]}',
      records: JSON.stringify({
        from: 0,
        items: [...before, { name: 'pause', type: 'wait', status: 'waiting', output: null }],
      }),
    },
  };
  const parked = (resumeAt: Date) => ({
    status: 'waiting' as const,
    steps: [],
    error: null,
    resumeAt: resumeAt.toISOString(),
    checkpoint,
  });
  const get = async (id: string) => (await executionsRepo.get(store.db, id))!;
  /** The names of the records so far, as the API shows them (from the checkpoint's parts). */
  const recordNames = async (id: string) => {
    const [row] = await executionsRepo.withRecordsSoFar(store.db, [await get(id)]);
    return (JSON.parse(row!.steps) as { name: string }[]).map((s) => s.name);
  };
  /** Each test moves its own clock: due times, leases and look-up intervals pass as it says. */
  let clock: FakeClock;
  beforeEach(() => {
    clock = new FakeClock();
  });

  it('records a parked result as waiting, claims it only when due, by any worker, from its checkpoint', async () => {
    const a = new Queue({ store, workerId: 'worker-a', clock });
    const b = new Queue({ store, workerId: 'worker-b', clock });
    const id = await queued();
    const [claimed] = await a.claim(5);
    expect(claimed?.id).toBe(id);
    const startedAt = claimed!.started_at;

    const resumeAt = new Date(clock.now() + 600);
    expect(await a.complete(id, parked(resumeAt))).toBe(true);
    const waiting = await get(id);
    expect(waiting).toMatchObject({
      status: 'waiting',
      run_after: resumeAt.toISOString(),
      locked_by: null,
      locked_until: null,
      finished_at: null,
      attempt: 1,
    });
    expect(JSON.parse(waiting.resume_state!)).toEqual({ at: 1, outputs: [{ a: 1 }] });
    expect(waiting.steps).toBe('[]');
    expect(await recordNames(id)).toEqual(['first', 'pause']);
    expect(await executionsRepo.checkpointParts(store.db, id)).toEqual([checkpoint.part]);
    // The worker that parked it knows when it is due (its timer); another learns it from the store.
    expect(a.waitingDueAt).toBe(resumeAt.getTime());

    // Not before it is due, by either worker.
    expect(await a.claim(5)).toEqual([]);
    expect(await b.claim(5)).toEqual([]);
    expect((await get(id)).status).toBe('waiting');

    await clock.advance(resumeAt.getTime() - clock.now() + 50);
    const [resumed] = await b.claim(5);
    expect(resumed).toMatchObject({ id, status: 'running', locked_by: 'worker-b', attempt: 1 });
    expect(JSON.parse(resumed!.resume_state!)).toEqual({ at: 1, outputs: [{ a: 1 }] });
    // Still the time it first started: a resume is not a new start.
    expect(resumed!.started_at).toBe(startedAt);

    // Finished: the checkpoint goes, the records are the engine's whole list.
    const done = {
      status: 'succeeded' as const,
      steps: [...before, { name: 'pause', type: 'wait', status: 'succeeded', output: { a: 1 } }],
      error: null,
    };
    expect(await b.complete(id, done, { resumed: true })).toBe(true);
    expect(await get(id)).toMatchObject({ status: 'succeeded', resume_state: null, locked_by: null });
    expect((await get(id)).finished_at).not.toBeNull();
    expect(await executionsRepo.checkpointParts(store.db, id)).toEqual([]);
    expect(await recordNames(id)).toEqual(['first', 'pause']);
  });

  it('a park whose lease was lost appends no part; parking again appends the next one', async () => {
    const a = new Queue({ store, workerId: 'parks-late', clock });
    const b = new Queue({ store, workerId: 'parks-twice', clock });
    const id = await queued();
    await b.claim(5);
    // `a` never held it: its park is not recorded, and neither is its part.
    expect(await a.complete(id, parked(new Date(clock.now() - 1)))).toBe(false);
    expect(await executionsRepo.checkpointParts(store.db, id)).toEqual([]);
    expect(await b.complete(id, parked(new Date(clock.now() - 1)))).toBe(true);
    await b.claim(5);
    const second = {
      head: '{"at":2}',
      seq: 2,
      part: { state: '{"values":[[1,"x"]],"outputs":[]}', records: '{"from":1,"items":[]}' },
    };
    expect(
      await b.complete(
        id,
        { ...parked(new Date(clock.now() + 60_000)), checkpoint: second },
        { resumed: true },
      ),
    ).toBe(true);
    expect(await executionsRepo.checkpointParts(store.db, id)).toEqual([checkpoint.part, second.part]);
    expect((await get(id)).resume_state).toBe('{"at":2}');
    await store.db.deleteFrom('execution_checkpoints').where('execution_id', '=', id).execute();
    await store.db.deleteFrom('executions').where('id', '=', id).execute();
  });

  it('a resumed attempt that crashes (its lease lapses) resumes from the checkpoint again, records kept', async () => {
    const a = new Queue({ store, workerId: 'crashing', leaseMs: 200, clock });
    const b = new Queue({ store, workerId: 'rescuer', clock });
    const id = await queued();
    await a.claim(5);
    await a.complete(id, parked(new Date(clock.now() - 1)));
    const [resumed] = await a.claim(5);
    expect(resumed?.id).toBe(id);
    // The worker dies: nothing renews the lease.
    // The lease lapses, and the lapsed-lease check (at most once a second per queue) is due.
    await clock.advance(1_300);
    const again = await b.claim(5);
    const row = again.find((r) => r.id === id) ?? (await b.claim(5)).find((r) => r.id === id);
    expect(row).toMatchObject({ status: 'running', locked_by: 'rescuer', attempt: 2 });
    expect(JSON.parse(row!.resume_state!)).toEqual({ at: 1, outputs: [{ a: 1 }] });
    expect(await recordNames(id)).toEqual(['first', 'pause']);
    await b.complete(id, { status: 'succeeded', steps: [], error: null }, { resumed: true });
  });

  it('a resumed attempt whose result cannot be written is queued again with its checkpoint and records', async () => {
    const q = new Queue({ store, workerId: 'retrying', clock });
    const id = await queued();
    await q.claim(5);
    await q.complete(id, parked(new Date(clock.now() - 1)));
    expect((await q.claim(5)).map((r) => r.id)).toContain(id);
    expect(await q.retryLater(id, 1, 'disk full')).toBe('queued');
    const row = await get(id);
    expect(row).toMatchObject({ status: 'queued', attempt: 2 });
    expect(JSON.parse(row.resume_state!)).toEqual({ at: 1, outputs: [{ a: 1 }] });
    expect(await recordNames(id)).toEqual(['first', 'pause']);
  });

  it('a resumed attempt left running by a stopped embedded process is queued again with its checkpoint on start', async () => {
    const q = new Queue({ store, workerId: 'stopped', clock });
    const id = await queued();
    await q.claim(5);
    await q.complete(id, parked(new Date(clock.now() - 1)));
    expect((await q.claim(5)).map((r) => r.id)).toContain(id);
    // What the next `hookflow start` does first (on a store it owns alone).
    if (!store.caps.shared) {
      expect(
        await new Queue({ store, workerId: 'restarted', clock }).releaseAbandoned(),
      ).toBeGreaterThanOrEqual(1);
      const row = await get(id);
      expect(row).toMatchObject({ status: 'queued', attempt: 2, locked_by: null });
      expect(JSON.parse(row.resume_state!)).toEqual({ at: 1, outputs: [{ a: 1 }] });
      expect(await recordNames(id)).toEqual(['first', 'pause']);
    }
    await store.db.deleteFrom('executions').where('id', '=', id).execute();
  });

  it('finds waiting rows parked by another worker within its look-up interval, and only due ones', async () => {
    const parker = new Queue({ store, workerId: 'parker', clock });
    const other = new Queue({ store, workerId: 'other', clock });
    // `other` has looked already and knows of nothing waiting.
    await other.claim(5);
    const soon = await queued();
    const later = await queued();
    await parker.claim(5);
    await parker.complete(soon, parked(new Date(clock.now() + 100)));
    await parker.complete(later, parked(new Date(clock.now() + 60_000)));
    await clock.advance(1_100);
    const claimed = (await other.claim(5)).map((r) => r.id);
    expect(claimed).toContain(soon);
    expect(claimed).not.toContain(later);
    // What it learned: the next one due is `later`.
    expect(Math.abs(other.waitingDueAt - Date.parse((await get(later)).run_after))).toBeLessThan(1);
    expect((await get(later)).status).toBe('waiting');
  });
});
