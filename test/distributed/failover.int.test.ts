/**
 * Workers coming and going (SPEC 10): a SIGKILLed worker's execution is completed by another
 * worker as attempt 2 once its lease lapses (the lease is 2 s here instead of 30 s); SIGTERM
 * drains a worker (it finishes what it runs and claims nothing new); with no worker at all a
 * lastStep call answers 504 and its execution runs when a worker comes back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, type RoleProcess, startCluster, within } from '../helpers/cluster.js';
import { type Downstream, startDownstream } from '../engine/int-helpers.js';

const LEASE_MS = 2_000;

let cluster: Cluster;
let hook: RoleProcess;
let downstream: Downstream;

beforeAll(async () => {
  downstream = await startDownstream();
  cluster = await startCluster({
    webhooks: 1,
    workers: 2,
    env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true', HOOKFLOW_LEASE_MS: String(LEASE_MS) },
  });
  hook = cluster.webhooks[0]!;
  const create = async (body: Record<string, unknown>) => {
    const res = await cluster.api(hook, 'POST', '/api/v1/workflows', body);
    expect(res.status).toBe(201);
    expect((await cluster.api(hook, 'POST', `/api/v1/workflows/${res.body.id}/activate`)).status).toBe(200);
  };
  await create({
    name: 'slow',
    trigger: { path: 'slow' },
    steps: [
      { name: 'wait', type: 'http', url: `${downstream.url}/slow?ms={{ query.ms }}` },
      { name: 'done', type: 'set', fields: { attempt: '{{ $execution.attempt }}' } },
    ],
  });
  // `code` steps: a webhook process runs only workflows of pure steps itself (queue/entry.ts);
  // these wait for a worker.
  await create({
    name: 'quick',
    trigger: { path: 'quick' },
    steps: [{ name: 'done', type: 'code', source: 'return { ok: true }' }],
  });
  await create({
    name: 'last',
    trigger: { path: 'last', response: { mode: 'lastStep', timeoutMs: 1_000 } },
    steps: [{ name: 'done', type: 'code', source: 'return { late: true }' }],
  });
});

afterAll(async () => {
  await cluster?.close();
  await downstream?.close();
});

const post = async (route: string) => {
  const res = await fetch(`${hook.url}${route}`, { method: 'POST' });
  return { status: res.status, executionId: res.headers.get('x-hookflow-execution-id')!, res };
};

const row = async (id: string) =>
  (
    await cluster.sql.query(
      'select status, attempt, locked_by, started_at, finished_at, steps from executions where id = $1',
      [id],
    )
  ).rows[0];

/** The worker process holding an execution's lease (its id is `host:pid:random`). */
const holder = (lockedBy: string) =>
  cluster.workers.find((w) => lockedBy.split(':').at(-2) === String(w.pid));

const alive = (p: RoleProcess) => p.child.exitCode === null && p.child.signalCode === null;

describe('worker failure', () => {
  it("completes a SIGKILLed worker's execution on another worker as attempt 2", async () => {
    const { status, executionId } = await post('/webhook/slow?ms=4000');
    expect(status).toBe(200);
    // Killed in the middle of its slow call.
    const slowCalls = () => downstream.received.filter((r) => r.path === '/slow').length;
    const { value: running } = await within(5_000, async () => {
      const r = await row(executionId);
      return r?.status === 'running' && slowCalls() === 1 && r;
    });
    const victim = holder(running.locked_by)!;
    expect(victim).toBeDefined();
    expect(running.attempt).toBe(1);

    victim.child.kill('SIGKILL');
    await victim.exited;

    // The lease lapses after ≤ 2 s, the other worker claims it and waits 4 s on the slow call.
    const { value: done } = await within(
      15_000,
      async () => {
        const r = await row(executionId);
        return r?.status !== 'running' && r?.status !== 'queued' && r;
      },
      100,
    );
    expect(done.status).toBe('succeeded');
    expect(done.attempt).toBe(2);
    expect(JSON.parse(done.steps).at(-1).output).toEqual({ attempt: 2 });
    // The killed attempt's call was sent too: at-least-once.
    expect(slowCalls()).toBe(2);
    expect(cluster.workers.filter(alive)).toHaveLength(1);
  });

  it('SIGTERM drains a worker: it finishes its running execution and claims nothing new', async () => {
    const [worker] = cluster.workers.filter(alive) as [RoleProcess];
    const slow = await post('/webhook/slow?ms=2500');
    await within(5_000, async () => (await row(slow.executionId))?.status === 'running');
    expect(holder((await row(slow.executionId)).locked_by)).toBe(worker);

    worker.child.kill('SIGTERM');
    await within(5_000, async () => worker.output().includes('shutting down'));
    // Queued while the only worker drains: nobody may take it.
    const quick = await post('/webhook/quick');
    expect(quick.status).toBe(200);

    const code = await worker.exited;
    const exitedAt = Date.now();
    expect(code).toBe(0);
    const finished = await row(slow.executionId);
    expect(finished).toMatchObject({ status: 'succeeded', attempt: 1 });
    expect(Date.parse(finished.finished_at)).toBeLessThanOrEqual(exitedAt);
    expect((await row(quick.executionId)).status).toBe('queued');

    // No worker at all: a lastStep call times out with its execution id; the execution waits.
    const late = await post('/webhook/last');
    expect(late.status).toBe(504);
    expect(((await late.res.json()) as { executionId: string }).executionId).toBe(late.executionId);
    expect((await row(late.executionId)).status).toBe('queued');

    // A new worker runs both, each once.
    await cluster.start('worker');
    for (const id of [quick.executionId, late.executionId]) {
      await within(10_000, async () => (await row(id))?.status === 'succeeded', 50);
      expect((await row(id)).attempt).toBe(1);
    }
  });
});
