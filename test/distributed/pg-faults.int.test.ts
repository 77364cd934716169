/**
 * Distributed mode against PostgreSQL faults (issue 15), with real `hookflow webhook` / `hookflow
 * worker` processes on a PostgreSQL server this file starts for itself (the machine's shared one
 * serves other test files in parallel, so it must not be restarted):
 * - a server restart in the middle of a load run: both roles survive and carry on, /readyz is back
 *   within seconds, every acknowledged request runs exactly once, every refusal is a 503;
 * - an idle worker whose backends are terminated keeps running, reconnects and takes new work;
 * - a SIGKILLed worker's executions are finished by the survivor within the lease + 5 s, and no
 *   worker ever holds more than `concurrency` running rows;
 * - no deadlock (40P01) between lease heartbeats and completions under load.
 * The figures in docs/scaling.md ("Failures") come from these runs (printed with `--reporter verbose`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Downstream, startDownstream } from '../engine/int-helpers.js';
import {
  activeWorkflow,
  type Cluster,
  type PgInstance,
  type RoleProcess,
  startCluster,
  startPgInstance,
  within,
} from '../helpers/cluster.js';

let pgi: PgInstance;
let downstream: Downstream;

beforeAll(async () => {
  [pgi, downstream] = await Promise.all([startPgInstance(), startDownstream()]);
});

afterAll(async () => {
  await downstream?.close();
  await pgi?.close();
});

const alive = (p: RoleProcess) => p.child.exitCode === null && p.child.signalCode === null;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sent {
  n: number;
  /** HTTP status, or 0 when the request itself failed (connection refused or reset). */
  status: number;
  executionId: string | null;
}

/** Numbered POSTs from `connections` loops until `stop()` is called; resolves with every answer. */
function load(url: (n: number) => string, connections: number) {
  const sent: Sent[] = [];
  let next = 0;
  let stopped = false;
  const loops = Array.from({ length: connections }, async () => {
    while (!stopped) {
      const n = next++;
      try {
        const res = await fetch(url(n), { method: 'POST' });
        await res.arrayBuffer();
        sent.push({ n, status: res.status, executionId: res.headers.get('x-hookflow-execution-id') });
      } catch {
        sent.push({ n, status: 0, executionId: null });
      }
    }
  });
  return {
    sent,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return sent;
    },
  };
}

const noDeadlocks = (cluster: Cluster) => {
  for (const p of [...cluster.webhooks, ...cluster.workers]) expect(p.output()).not.toContain('40P01');
};

describe('a PostgreSQL restart under load', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({
      db: await pgi.createDatabase(),
      webhooks: 1,
      workers: 2,
      env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true', HOOKFLOW_LEASE_MS: '10000' },
    });
    await activeWorkflow(cluster, {
      name: 'count',
      trigger: { path: 'count' },
      steps: [
        { name: 'hit', type: 'http', url: `${downstream.url}/echo`, headers: { 'x-n': '{{ query.n }}' } },
      ],
    });
  });
  afterAll(() => cluster?.close());

  it('both roles survive, /readyz is back within seconds, every 2xx runs exactly once, every refusal is a 503', async () => {
    const hook = cluster.webhooks[0]!;
    const run = load((n) => `${hook.url}/webhook/count?n=${n}`, 16);
    await sleep(1_500);
    const stoppedAt = Date.now();
    await pgi.stop();
    await sleep(1_000);
    await pgi.start();
    const startedAt = Date.now();
    const { ms: readyMs } = await within(
      15_000,
      async () => (await fetch(`${hook.url}/readyz`).catch(() => undefined))?.status === 200,
      50,
    );
    await sleep(1_500);
    const sent = await run.stop();

    expect([...cluster.webhooks, ...cluster.workers].filter((p) => !alive(p))).toEqual([]);
    const acked = sent.filter((s) => s.status >= 200 && s.status < 300);
    const refused = sent.filter((s) => !(s.status >= 200 && s.status < 300));
    // The outage was felt (requests were refused) and every refusal was a 503, none a 500 or a reset.
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.filter((s) => s.status !== 503)).toEqual([]);
    // Requests are accepted again after the restart.
    expect(acked.filter((s) => s.n > sent.length - 100).length).toBeGreaterThan(0);

    // Every acknowledged request's execution finishes, and its http step was sent exactly once.
    const ids = acked.map((s) => s.executionId!);
    const { ms: drainMs } = await within(
      30_000,
      async () => {
        const { rows } = await cluster.sql.query(
          "select count(*)::int as n from executions where id = any($1) and status in ('succeeded', 'failed')",
          [ids],
        );
        return rows[0].n === ids.length;
      },
      200,
    );
    const { rows } = await cluster.sql.query(
      'select status, attempt, count(*)::int as n from executions where id = any($1) group by 1, 2',
      [ids],
    );
    expect(rows.filter((r) => r.status !== 'succeeded')).toEqual([]);
    const hits = new Map<string, number>();
    for (const r of downstream.received)
      if (r.path === '/echo')
        hits.set(String(r.headers['x-n']), (hits.get(String(r.headers['x-n'])) ?? 0) + 1);
    const wrong = acked.filter((s) => hits.get(String(s.n)) !== 1).map((s) => [s.n, hits.get(String(s.n))]);
    expect(wrong).toEqual([]);
    noDeadlocks(cluster);
    console.log(
      `PostgreSQL restart: ${sent.length} requests, ${acked.length} 2xx, ${refused.length} 503;` +
        ` server down ${startedAt - stoppedAt} ms; /readyz 200 ${readyMs} ms after the server was up;` +
        ` attempts ${JSON.stringify(rows.map((r) => [r.attempt, r.n]))}; drained ${drainMs} ms after the load`,
    );
  }, 60_000);
});

describe('an idle worker whose connections are terminated', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({ db: await pgi.createDatabase(), webhooks: 1, workers: 0 });
    await activeWorkflow(cluster, {
      name: 'quick',
      trigger: { path: 'quick' },
      steps: [{ name: 'done', type: 'set', fields: { ok: true } }],
    });
  });
  afterAll(() => cluster?.close());

  it('keeps running, reconnects, and executes new work', async () => {
    // All of its backends (pool and bus) carry this name, so only they are terminated.
    const worker = await cluster.start('worker', {
      HOOKFLOW_DATABASE_URL: `${cluster.db.url}?application_name=idle-worker`,
    });
    await sleep(300);
    const { rows } = await cluster.sql.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'idle-worker'",
    );
    expect(rows.length).toBeGreaterThan(0);
    // Before the fix it exited 0 about 0.1 s later.
    await within(5_000, async () => worker.output().includes('bus reconnected'), 50);
    await sleep(1_000);
    expect(alive(worker)).toBe(true);

    const res = await fetch(`${cluster.webhooks[0]!.url}/webhook/quick`, { method: 'POST' });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-hookflow-execution-id');
    await within(
      10_000,
      async () =>
        (await cluster.sql.query('select status from executions where id = $1', [id])).rows[0]?.status ===
        'succeeded',
      50,
    );
    expect(alive(worker)).toBe(true);
  });
});

describe('a SIGKILLed worker with a backlog', () => {
  const LEASE_MS = 3_000;
  const CONCURRENCY = 4;
  /** The running rows a worker holds are capped by its in-flight bound, not its compute slots. */
  const MAX_IN_FLIGHT = 40;
  const BACKLOG = 1_200;
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({
      db: await pgi.createDatabase(),
      webhooks: 1,
      workers: 0,
      env: {
        HOOKFLOW_LEASE_MS: String(LEASE_MS),
        HOOKFLOW_EXECUTOR_CONCURRENCY: String(CONCURRENCY),
        HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
        HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
      },
    });
    // Not pure (a call out): its executions are claimed `running` for a slot. (A pure one is run in
    // a batch and never `running`: test/distributed/pure-batches.int.test.ts kills a worker there.)
    await activeWorkflow(cluster, {
      name: 'fast',
      trigger: { path: 'fast' },
      steps: [
        { name: 'done', type: 'http', url: `${downstream.url}/echo`, headers: { 'x-n': '{{ query.n }}' } },
      ],
    });
  });
  afterAll(() => cluster?.close());

  it('the survivor finishes its executions within the lease + 5 s, never holding more running rows than its in-flight cap', async () => {
    const hook = cluster.webhooks[0]!;
    // The backlog, queued with no worker running.
    const run = load((n) => `${hook.url}/webhook/fast?n=${n}`, 20);
    await within(40_000, async () => run.sent.length >= BACKLOG, 50);
    const sent = await run.stop();
    expect(sent.filter((s) => s.status !== 200)).toEqual([]);

    const [victim, survivor] = await Promise.all([cluster.start('worker'), cluster.start('worker')]);
    const workerOf = (lockedBy: string) =>
      cluster.workers.find((w) => lockedBy.split(':').at(-2) === String(w.pid));
    // Running rows per worker, sampled for the whole run.
    const most = new Map<RoleProcess, number>();
    let sampling = true;
    const sampler = (async () => {
      // Stops with the test, and on a failed query (the cluster closed after a failure).
      while (sampling && !cluster.sql.ended) {
        const { rows } = await cluster.sql.query<{ locked_by: string; n: number }>(
          "select locked_by, count(*)::int as n from executions where status = 'running' group by 1",
        );
        for (const r of rows) {
          const w = workerOf(r.locked_by);
          if (w) most.set(w, Math.max(most.get(w) ?? 0, r.n));
        }
        await sleep(20);
      }
    })().catch(() => undefined); // a query failing as the cluster closes after a failed assertion
    const finished = async () =>
      (
        await cluster.sql.query(
          "select count(*)::int as n from executions where status in ('succeeded', 'failed')",
        )
      ).rows[0].n as number;
    await within(20_000, async () => (await finished()) >= sent.length / 5, 20);

    victim.child.kill('SIGKILL');
    await victim.exited;
    const { rows: stranded } = await cluster.sql.query(
      "select id from executions where status = 'running' and locked_by like $1",
      [`%:${victim.pid}:%`],
    );
    const strandedIds = stranded.map((r) => r.id as string);
    const { ms: recoveredMs } = await within(
      LEASE_MS + 10_000,
      async () =>
        (
          await cluster.sql.query(
            "select count(*)::int as n from executions where id = any($1) and status in ('succeeded', 'failed')",
            [strandedIds],
          )
        ).rows[0].n === strandedIds.length,
      50,
    );
    await within(30_000, async () => (await finished()) === sent.length, 100);
    sampling = false;
    await sampler;

    expect(alive(survivor)).toBe(true);
    expect(recoveredMs).toBeLessThanOrEqual(LEASE_MS + 5_000);
    expect(most.get(survivor)).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    expect(most.get(victim) ?? 0).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    const { rows: states } = await cluster.sql.query(
      'select status, attempt, count(*)::int as n from executions group by 1, 2 order by 1, 2',
    );
    expect(states.filter((r) => r.status !== 'succeeded')).toEqual([]);
    noDeadlocks(cluster);
    console.log(
      `SIGKILL with a backlog: ${strandedIds.length} running rows stranded, finished ${recoveredMs} ms after the` +
        ` kill (lease ${LEASE_MS} ms); most running rows held: victim ${most.get(victim)}, survivor` +
        ` ${most.get(survivor)} (in flight at most ${MAX_IN_FLIGHT}, concurrency ${CONCURRENCY}); attempts ${JSON.stringify(states.map((r) => [r.attempt, r.n]))}`,
    );
  }, 90_000);
});
