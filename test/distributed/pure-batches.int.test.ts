/**
 * Pure executions in batches on PostgreSQL (issue 20, queue/pure-batch.ts), with real `hookflow
 * webhook` / `hookflow worker` processes: a worker locks queued rows (FOR UPDATE SKIP LOCKED), runs
 * the pure ones inside that transaction and records them all before its COMMIT, never making them
 * `running`. What it must keep: every execution runs exactly once, a worker killed in the middle
 * of a batch leaves its rows queued and untouched for another worker, two workers on one backlog
 * never both run a row, a row that is not pure is still run (claimed for a slot), and a failed
 * pure execution starts its error workflow.
 *
 * Who changed what is read from the database itself: a trigger the test adds logs every status
 * change of an execution with the transaction and the session (`application_name`, set per worker
 * in its database URL) that made it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Downstream, startDownstream } from '../engine/int-helpers.js';
import { type Cluster, type RoleProcess, activeWorkflow, startCluster, within } from '../helpers/cluster.js';

let downstream: Downstream;

beforeAll(async () => {
  downstream = await startDownstream();
});

afterAll(async () => {
  await downstream?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A cluster of one webhook process and no worker, with the status log installed. Its webhook
 * process stores every execution queued (HOOKFLOW_INGEST_RUN_PURE=false; by default it runs pure
 * workflows itself, test/distributed/webhook-pure.int.test.ts), so pure ones reach the workers'
 * batches here as retries, replays, error workflows and runs that missed their slice do.
 */
async function cluster(env: Record<string, string> = {}): Promise<Cluster> {
  const c = await startCluster({
    webhooks: 1,
    workers: 0,
    env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true', HOOKFLOW_INGEST_RUN_PURE: 'false', ...env },
  });
  await c.sql.query(`
    create table status_log (id text, status text, app text, xid bigint);
    create function log_status() returns trigger language plpgsql as $$
    begin
      insert into status_log values (new.id, new.status, current_setting('application_name'), txid_current());
      return new;
    end $$;
    create trigger log_status after update of status on executions
      for each row when (old.status is distinct from new.status) execute function log_status();`);
  return c;
}

/** A worker whose sessions carry `app` as their application_name. */
const worker = (c: Cluster, app: string, env: Record<string, string> = {}) =>
  c.start('worker', { HOOKFLOW_DATABASE_URL: `${c.db.url}?application_name=${app}`, ...env });

/** POSTs `/webhook/<path(n)>?n=<n>` for n in [0, count) over 20 connections; the execution ids, by n. */
async function send(c: Cluster, count: number, path: (n: number) => string): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      for (let n = next++; n < count; n = next++) {
        const res = await fetch(`${c.webhooks[0]!.url}/webhook/${path(n)}?n=${n}`, { method: 'POST' });
        expect(res.status).toBe(200);
        ids[n] = res.headers.get('x-hookflow-execution-id')!;
      }
    }),
  );
  return ids;
}

const finished = async (c: Cluster, ids: string[]) =>
  (
    await c.sql.query(
      "select count(*)::int as n from executions where id = any($1) and status in ('succeeded', 'failed', 'filtered')",
      [ids],
    )
  ).rows[0].n as number;

const allFinished = (c: Cluster, ids: string[], timeoutMs = 30_000) =>
  within(timeoutMs, async () => (await finished(c, ids)) === ids.length, 100);

/** Status changes of `ids` to a finished status: [id, app, xid] each. */
async function finishes(c: Cluster, ids: string[]) {
  const { rows } = await c.sql.query<{ id: string; app: string; xid: string }>(
    "select id, app, xid from status_log where id = any($1) and status in ('succeeded', 'failed', 'filtered')",
    [ids],
  );
  return rows;
}

/** Ids finished more than once, or never. */
function notOnce(ids: string[], rows: { id: string }[]): string[] {
  const times = new Map<string, number>();
  for (const r of rows) times.set(r.id, (times.get(r.id) ?? 0) + 1);
  return ids.filter((id) => times.get(id) !== 1);
}

const outputOf = (steps: string) => JSON.parse(steps).at(-1).output;

/**
 * Checks that every execution of `ids` (n-th: request `?n=<n>`) succeeded at attempt 1 with output
 * `{ n: expected(n) }` and was finished once; returns how many were made `running` (went to the
 * executor, claimed, each finished on its own) and in how many transactions the others were
 * finished (the batches').
 */
async function ranOnceEach(c: Cluster, ids: string[], expected: (n: number) => number) {
  const { rows } = await c.sql.query('select id, status, attempt, steps from executions where id = any($1)', [
    ids,
  ]);
  const byId = new Map(rows.map((r) => [r.id as string, r]));
  const wrong = ids.filter((id, n) => {
    const r = byId.get(id);
    return r?.status !== 'succeeded' || r.attempt !== 1 || outputOf(r.steps).n !== expected(n);
  });
  expect(wrong).toEqual([]);
  const done = await finishes(c, ids);
  expect(notOnce(ids, done)).toEqual([]);
  const { rows: running } = await c.sql.query(
    "select distinct id from status_log where id = any($1) and status = 'running'",
    [ids],
  );
  const claimed = new Set(running.map((r) => r.id as string));
  const batched = done.filter((r) => !claimed.has(r.id));
  return { transactions: new Set(batched.map((r) => r.xid)).size, running: claimed.size };
}

describe('pure executions in batches', () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await cluster();
  });
  afterAll(() => c?.close());

  it('a backlog runs exactly once, many executions per transaction, none of them running', async () => {
    const N = 600;
    await activeWorkflow(c, {
      name: 'double',
      trigger: { path: 'double' },
      steps: [{ name: 'double', type: 'set', fields: { n: '{{ $number(query.n) * 2 }}' } }],
    });
    const ids = await send(c, N, () => 'double');
    expect(await finished(c, ids)).toBe(0);

    await worker(c, 'w1');
    await allFinished(c, ids);

    const { transactions, running } = await ranOnceEach(c, ids, (n) => n * 2);
    console.log(
      `batches: ${N} pure executions; the batched ones in ${transactions} transactions; ${running} went to the executor`,
    );
    // Batches of up to 128 rows, one transaction each: the backlog took a handful of them. (A run
    // that misses its 5 ms slice on a loaded machine goes to the executor, claimed: a few at most.)
    expect(transactions).toBeLessThanOrEqual(N / 10);
    expect(running).toBeLessThanOrEqual(N / 20);
  });
});

describe('contained executions (a code step) in batches', () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await cluster();
  });
  afterAll(() => c?.close());

  it('run on the engine thread inside the batch: exactly once, in few transactions, running only while the thread starts', async () => {
    const N = 400;
    await activeWorkflow(c, {
      name: 'code',
      trigger: { path: 'code' },
      steps: [{ name: 'triple', type: 'code', source: 'return { n: Number($input.query.n) * 3 }' }],
    });
    const ids = await send(c, N, () => 'code');
    await worker(c, 'coder');
    await allFinished(c, ids);

    const { transactions, running } = await ranOnceEach(c, ids, (n) => n * 3);
    console.log(
      `contained batches: ${N} code executions; the batched ones in ${transactions} transactions; ${running} went to the executor`,
    );
    // Rows share transactions: at least two a batch on average (one each would be ~N). A batch
    // stops after its 25 ms budget: on an idle machine here that held ~40 code runs (10 batches),
    // under two CPU burners on two cores as few as 3 (129 batches).
    expect(transactions).toBeLessThanOrEqual(N / 2);
    // The engine thread starts with the first run (loading QuickJS): runs that wait longer than
    // THREAD_RUN_MS meanwhile go to the executor, claimed; after that, none.
    expect(running).toBeLessThanOrEqual(N / 10);
  });
});

describe('a worker SIGKILLed in the middle of a batch', () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await cluster({ HOOKFLOW_LEASE_MS: '3000' });
  });
  afterAll(() => c?.close());

  it('leaves the rows it had locked queued and untouched; another worker runs each of them once', async () => {
    const N = 3_000;
    // ~0.1–0.5 ms of JSONata per run: a batch spends its budget running rows with its locks held.
    await activeWorkflow(c, {
      name: 'sum',
      trigger: { path: 'sum' },
      steps: [{ name: 'sum', type: 'set', fields: { n: '{{ $sum([1..200]) + $number(query.n) }}' } }],
    });
    const ids = await send(c, N, () => 'sum');
    const victim = await worker(c, 'victim');
    // Killed in the middle of the backlog, after some batches committed.
    await within(20_000, async () => (await finished(c, ids)) >= 200, 10);

    // Stop the victim between two instructions; kill it only while a batch holds its rows (its
    // session idle in the transaction that locked them), else let it go on and try again.
    let xid: string | undefined;
    for (let attempt = 0; attempt < 500 && !xid; attempt++) {
      await sleep(attempt % 7);
      victim.child.kill('SIGSTOP');
      const { rows } = await c.sql.query<{ xid: string | null }>(
        `select backend_xid::text as xid from pg_stat_activity
          where application_name = 'victim' and state = 'idle in transaction'
            and query ilike '%for update skip locked%'`,
      );
      if (rows[0]?.xid) {
        xid = rows[0].xid;
        victim.child.kill('SIGKILL');
      } else victim.child.kill('SIGCONT');
    }
    expect(xid).toBeDefined();
    await victim.exited;

    // Its transaction rolled back: the rows it had locked (their xmax is its transaction) are
    // queued as they were, and none of them was recorded by it.
    const {
      value: { rows: locked },
    } = await within(5_000, async () => {
      const r = await c.sql.query<{ id: string; status: string; attempt: number; locked_by: string | null }>(
        `select id, status, attempt, locked_by from executions e
          where xmax::text = $1
            and not exists (select 1 from pg_stat_activity where application_name = 'victim')`,
        [xid],
      );
      return r.rows.length > 0 && r;
    });
    expect(locked.filter((r) => r.status !== 'queued' || r.attempt !== 1 || r.locked_by !== null)).toEqual(
      [],
    );
    const lockedIds = locked.map((r) => r.id);
    const { rows: byVictim } = await c.sql.query(
      'select count(*)::int as n from status_log where xid::text = $1 or id = any($2) and app = $3',
      [xid, lockedIds, 'victim'],
    );
    expect(byVictim[0].n).toBe(0);
    const before = await finished(c, ids);
    expect(before).toBeGreaterThanOrEqual(200);
    expect(before).toBeLessThan(N);

    await worker(c, 'survivor');
    await allFinished(c, ids);
    const done = await finishes(c, ids);
    expect(notOnce(ids, done)).toEqual([]);
    expect(done.filter((r) => lockedIds.includes(r.id) && r.app !== 'survivor')).toEqual([]);
    const { rows } = await c.sql.query('select id, status, attempt from executions where id = any($1)', [
      ids,
    ]);
    expect(rows.filter((r) => r.status !== 'succeeded')).toEqual([]);
    // A second attempt only for a row the victim held `running`: a run that missed its slice on a
    // loaded machine goes to the executor, and its lease lapsed with the victim.
    const { rows: held } = await c.sql.query(
      "select id from status_log where status = 'running' and app = 'victim' and id = any($1)",
      [ids],
    );
    const heldIds = new Set(held.map((r) => r.id as string));
    expect(rows.filter((r) => r.attempt !== 1 && !heldIds.has(r.id))).toEqual([]);
    console.log(
      `SIGKILL in a batch: ${lockedIds.length} rows locked by the killed transaction stayed queued;` +
        ` ${before} of ${N} finished before the kill (${heldIds.size} of them held running), the survivor ran the rest`,
    );
  });
});

describe('two workers on one backlog', () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await cluster();
  });
  afterAll(() => c?.close());

  it('never run a row twice, and both take a share', async () => {
    const N = 2_000;
    await activeWorkflow(c, {
      name: 'both',
      trigger: { path: 'both' },
      steps: [{ name: 'echo', type: 'set', fields: { n: '{{ $number(query.n) }}' } }],
    });
    await Promise.all([worker(c, 'one'), worker(c, 'two')]);
    const ids = await send(c, N, () => 'both');
    await allFinished(c, ids);
    const done = await finishes(c, ids);
    expect(notOnce(ids, done)).toEqual([]);
    const share = (app: string) => done.filter((r) => r.app === app).length;
    expect(share('one')).toBeGreaterThan(0);
    expect(share('two')).toBeGreaterThan(0);
    const { rows } = await c.sql.query(
      'select status, attempt, count(*)::int as n from executions where id = any($1) group by 1, 2',
      [ids],
    );
    expect(rows).toEqual([{ status: 'succeeded', attempt: 1, n: N }]);
    console.log(`two workers: ${share('one')} and ${share('two')} of ${N} executions`);
  });
});

describe('a batch holding rows that are not pure', () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await cluster();
  });
  afterAll(() => c?.close());

  it('claims them for its free slots and runs each once, the pure rows around them too', async () => {
    const CONCURRENCY = 4;
    await activeWorkflow(c, {
      name: 'pure',
      trigger: { path: 'pure' },
      steps: [{ name: 'n', type: 'set', fields: { n: '{{ query.n }}' } }],
    });
    await activeWorkflow(c, {
      name: 'calls',
      trigger: { path: 'calls' },
      steps: [
        { name: 'call', type: 'http', url: `${downstream.url}/echo`, headers: { 'x-n': '{{ query.n }}' } },
      ],
    });
    // Every fourth request calls the downstream service: not pure, so it needs a slot.
    const N = 400;
    const calls = (n: number) => n % 4 === 0;
    const ids = await send(c, N, (n) => (calls(n) ? 'calls' : 'pure'));
    const before = downstream.received.length;

    const running: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await c.sql.query(
          "select count(*)::int as n from executions where status = 'running' and id = any($1)",
          [ids],
        );
        running.push(rows[0].n);
        await sleep(10);
      }
    })();
    // The rows a worker holds `running` are capped by its in-flight bound (the compute slots
    // bound only what computes at once).
    await worker(c, 'mixed', {
      HOOKFLOW_EXECUTOR_CONCURRENCY: String(CONCURRENCY),
      HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT: String(CONCURRENCY),
    });
    await allFinished(c, ids);
    sampling = false;
    await sampler;

    const { rows } = await c.sql.query(
      'select status, attempt, count(*)::int as n from executions where id = any($1) group by 1, 2',
      [ids],
    );
    expect(rows).toEqual([{ status: 'succeeded', attempt: 1, n: N }]);
    expect(notOnce(ids, await finishes(c, ids))).toEqual([]);
    const hits = downstream.received.slice(before).map((r) => Number(r.headers['x-n']));
    const expected = ids.map((_, n) => n).filter(calls);
    expect(hits.sort((a, b) => a - b)).toEqual(expected);
    // The calling rows went through `running`, claimed for a slot: never more than the concurrency.
    const { rows: claimed } = await c.sql.query(
      "select count(distinct id)::int as n from status_log where status = 'running' and id = any($1)",
      [expected.map((n) => ids[n]!)],
    );
    expect(claimed[0].n).toBe(expected.length);
    expect(Math.max(...running)).toBeLessThanOrEqual(CONCURRENCY);
  });
});

describe('a pure execution that fails in a batch', () => {
  let c: Cluster;
  let w: RoleProcess | undefined;
  beforeAll(async () => {
    c = await cluster();
  });
  afterAll(() => c?.close());

  it('starts its error workflow with the failure item, once', async () => {
    const hook = c.webhooks[0]!;
    const handler = await c.api(hook, 'POST', '/api/v1/workflows', {
      name: 'on failure',
      steps: [
        { name: 'seen', type: 'set', fields: { failed: '{{ execution.id }}', why: '{{ error.message }}' } },
      ],
    });
    expect(handler.status).toBe(201);
    await activeWorkflow(c, {
      name: 'refuses',
      trigger: { path: 'refuses' },
      settings: { errorWorkflowId: handler.body.id },
      steps: [{ name: 'refuse', type: 'fail', message: '{{ "refused " & query.n }}' }],
    });
    const N = 50;
    const ids = await send(c, N, () => 'refuses');
    w = await worker(c, 'failing');
    await allFinished(c, ids);

    const { value: failed } = await within(
      15_000,
      async () => {
        const { rows } = await c.sql.query(
          `select f.id, f.status, f.error, e.status as error_status, e.mode, e.steps as error_steps
             from executions f join executions e on e.id = f.error_execution_id
            where f.id = any($1) and e.status = 'succeeded'`,
          [ids],
        );
        return rows.length === N && rows;
      },
      100,
    );
    expect(w.output()).not.toContain('starting the error workflow failed');
    const wrong = failed.filter(
      (r) =>
        r.status !== 'failed' ||
        r.mode !== 'error' ||
        outputOf(r.error_steps).failed !== r.id ||
        outputOf(r.error_steps).why !== JSON.parse(r.error).message,
    );
    expect(wrong).toEqual([]);
    expect(failed.map((r) => JSON.parse(r.error).message).sort()).toEqual(
      ids.map((_, n) => `refused ${n}`).sort(),
    );
    // One error execution per failure.
    const { rows: errors } = await c.sql.query(
      "select count(*)::int as n from executions where workflow_id = $1 and mode = 'error'",
      [handler.body.id],
    );
    expect(errors[0].n).toBe(N);
  });
});
