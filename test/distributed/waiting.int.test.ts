/**
 * A wait started on one worker resumes on another (SPEC 7b, SPEC 10, issue 18): worker A runs the
 * execution until its `wait` and parks it; A stops; worker B, started afterwards, resumes it at its
 * time from the checkpoint (the step before the wait is not sent again). A waiting execution holds
 * no lease, so A's SIGTERM drain does not wait for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster, within } from '../helpers/cluster.js';
import { type Downstream, startDownstream } from '../engine/int-helpers.js';

let cluster: Cluster;
let downstream: Downstream;

beforeAll(async () => {
  downstream = await startDownstream();
  cluster = await startCluster({ webhooks: 1, workers: 1, env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
});

afterAll(async () => {
  await cluster?.close();
  await downstream?.close();
});

const row = async (id: string) =>
  (
    await cluster.sql.query(
      'select status, attempt, locked_by, run_after, resume_state, steps, finished_at from executions where id = $1',
      [id],
    )
  ).rows[0];

describe('wait across workers', () => {
  it('a wait started on worker A resumes on worker B after A stopped', async () => {
    const hook = cluster.webhooks[0]!;
    const [a] = cluster.workers;
    const created = await cluster.api(hook, 'POST', '/api/v1/workflows', {
      name: 'waits',
      trigger: { path: 'waits' },
      steps: [
        {
          name: 'before',
          type: 'http',
          method: 'POST',
          url: `${downstream.url}/echo`,
          body: '{{ {"step": "before"} }}',
        },
        { name: 'pause', type: 'wait', seconds: 3 },
        {
          name: 'after',
          type: 'http',
          method: 'POST',
          url: `${downstream.url}/echo`,
          body: '{{ {"step": "after"} }}',
        },
      ],
    });
    expect(created.status).toBe(201);
    expect((await cluster.api(hook, 'POST', `/api/v1/workflows/${created.body.id}/activate`)).status).toBe(
      200,
    );

    const res = await fetch(`${hook.url}/webhook/waits`, { method: 'POST' });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-hookflow-execution-id')!;
    const { value: parked } = await within(10_000, async () => {
      const r = await row(id);
      return r?.status === 'waiting' && r;
    });
    expect(parked.locked_by).toBeNull();
    expect(parked.resume_state).not.toBeNull();

    // A drains and exits at once: it holds nothing.
    a!.child.kill('SIGTERM');
    expect(await a!.exited).toBe(0);
    expect((await row(id)).status).toBe('waiting');

    const b = await cluster.start('worker');
    const { value: done } = await within(
      15_000,
      async () => {
        const r = await row(id);
        return r && !['queued', 'running', 'waiting'].includes(r.status) && r;
      },
      100,
    );
    expect(done.status).toBe('succeeded');
    expect(done.attempt).toBe(1);
    expect(done.resume_state).toBeNull();
    expect(JSON.parse(done.steps).map((s: { name: string }) => s.name)).toEqual(['before', 'pause', 'after']);
    expect(Date.parse(done.finished_at)).toBeGreaterThanOrEqual(Date.parse(parked.run_after));
    expect(downstream.received.map((r) => (r.body as { step: string }).step)).toEqual(['before', 'after']);
    // B is the only worker alive: it resumed it.
    expect(b.child.exitCode).toBeNull();
    expect(a!.child.exitCode).toBe(0);
  });
});
