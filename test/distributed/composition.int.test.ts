/**
 * The data store and sub-workflows in distributed mode (SPEC 7f, SPEC 10): `hookflow webhook` and
 * `hookflow worker` processes on one PostgreSQL.
 * - 200 concurrent `setIfAbsent` on one key, run by two workers: exactly one `set: true`;
 *   1 000 concurrent increments: the exact total.
 * - A sub-workflow chain of 3 (caller → middle → leaf) with the worker SIGKILLed while the leaf
 *   runs: another worker finishes it, and each level ran as one execution (no second child).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Downstream, startDownstream } from '../engine/int-helpers.js';
import { type Cluster, type RoleProcess, startCluster, within } from '../helpers/cluster.js';

const LEASE_MS = 3_000;

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
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await downstream?.close();
});

async function workflow(body: Record<string, unknown>, activate = true): Promise<string> {
  const res = await cluster.api(hook, 'POST', '/api/v1/workflows', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const id = res.body.id as string;
  expect((await cluster.api(hook, 'POST', `/api/v1/workflows/${id}/publish`)).status).toBe(200);
  if (!activate)
    expect((await cluster.api(hook, 'POST', `/api/v1/workflows/${id}/deactivate`)).status).toBe(200);
  return id;
}

async function fire(path: string, count: number, width = 50): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        next++;
        const res = await fetch(`${hook.url}/webhook/${path}`, { method: 'POST' });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
    }),
  );
}

const finished = async (workflowId: string, count: number) =>
  within(
    120_000,
    async () => {
      const { rows } = await cluster.sql.query(
        `select count(*)::int as n from executions where workflow_id = $1 and status in ('succeeded', 'failed')`,
        [workflowId],
      );
      return rows[0].n >= count;
    },
    200,
  );

describe('the data store across workers', () => {
  it('200 concurrent setIfAbsent on one key: exactly one set', async () => {
    const id = await workflow({
      name: 'dedup',
      trigger: { path: 'dedup' },
      steps: [
        // A short outbound call first, so the executions spread over both workers' slots.
        { name: 'lookup', type: 'http', url: `${downstream.url}/slow?ms=300` },
        {
          name: 'seen',
          type: 'store',
          op: 'setIfAbsent',
          key: 'order:1',
          value: '{{ $execution.id }}',
          scope: 'global',
        },
      ],
    });
    // Which workers hold executions while they run (a finished row no longer names its worker).
    const holders = new Set<string>();
    let sampling = true;
    const sample = (async () => {
      while (sampling) {
        const { rows } = await cluster.sql.query(
          `select distinct locked_by from executions where workflow_id = $1 and status = 'running'`,
          [id],
        );
        for (const r of rows) holders.add(r.locked_by);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await fire('dedup', 200);
    await finished(id, 200);
    sampling = false;
    await sample;
    const { rows } = await cluster.sql.query(
      `select id, status, steps from executions where workflow_id = $1`,
      [id],
    );
    expect(rows).toHaveLength(200);
    expect(rows.filter((r) => r.status !== 'succeeded')).toEqual([]);
    const outputs = rows.map((r) => JSON.parse(r.steps)[1].output as { set: boolean; value: string });
    const winners = rows.filter((_, i) => outputs[i]!.set);
    expect(winners).toHaveLength(1);
    // Every execution answers the winner's value: its own id.
    expect(new Set(outputs.map((o) => o.value))).toEqual(new Set([winners[0]!.id]));
    // Both workers ran some of them.
    expect(holders.size).toBe(2);
  });

  it('1 000 concurrent increments: the exact total', async () => {
    const id = await workflow({
      name: 'count',
      trigger: { path: 'count' },
      steps: [{ name: 'add', type: 'store', op: 'increment', key: 'hits', scope: 'global' }],
    });
    await fire('count', 1000);
    await finished(id, 1000);
    const res = await cluster.api(hook, 'GET', '/api/v1/store/global/hits');
    expect(res.body.value).toBe(1000);
  });
});

describe('a sub-workflow chain across a killed worker', () => {
  it('completes once, one child execution per level', async () => {
    const leaf = await workflow(
      {
        name: 'leaf',
        steps: [
          { name: 'slow', type: 'http', url: `${downstream.url}/slow?ms=3000` },
          { name: 'answer', type: 'set', fields: { leaf: '{{ $trigger.body }}' } },
        ],
      },
      false,
    );
    const middle = await workflow(
      {
        name: 'middle',
        steps: [{ name: 'to leaf', type: 'workflow', workflowId: leaf, input: '{{ body }}' }],
      },
      false,
    );
    const top = await workflow({
      name: 'top',
      trigger: { path: 'chain' },
      steps: [{ name: 'to middle', type: 'workflow', workflowId: middle, input: 'hello' }],
    });
    const res = await fetch(`${hook.url}/webhook/chain`, { method: 'POST' });
    const topId = res.headers.get('x-hookflow-execution-id')!;
    // The leaf runs (its http step waits 3 s): kill the worker running it.
    const { value: holder } = await within(60_000, async () => {
      const { rows } = await cluster.sql.query(
        `select locked_by from executions where workflow_id = $1 and status = 'running'`,
        [leaf],
      );
      return rows[0]?.locked_by as string | undefined;
    });
    const victim = cluster.workers.find((w) => holder.includes(`:${w.pid}:`))!;
    expect(victim).toBeDefined();
    victim.child.kill('SIGKILL');
    await victim.exited;
    // The other worker takes the leaf over once its lease lapses, and the chain completes.
    await within(
      90_000,
      async () => {
        const { rows } = await cluster.sql.query('select status from executions where id = $1', [topId]);
        return rows[0]?.status === 'succeeded';
      },
      200,
    );
    const top1 = await cluster.api(hook, 'GET', `/api/v1/executions/${topId}`);
    expect(top1.body.steps[0].output).toEqual({ leaf: 'hello' });
    for (const workflowId of [middle, leaf]) {
      const { rows } = await cluster.sql.query(
        'select id, status, mode, parent_execution_id from executions where workflow_id = $1',
        [workflowId],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: 'succeeded', mode: 'sub' });
    }
    const { rows: leafRows } = await cluster.sql.query(
      'select attempt from executions where workflow_id = $1',
      [leaf],
    );
    expect(leafRows[0].attempt).toBeGreaterThan(1);
    expect(
      (await cluster.sql.query('select count(*)::int as n from executions where workflow_id = $1', [top]))
        .rows[0].n,
    ).toBe(1);
  }, 180_000);
});
