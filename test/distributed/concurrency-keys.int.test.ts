/**
 * Concurrency keys and newest wins (SPEC 7d) across processes: one `hookflow webhook` and two
 * `hookflow worker`s on PostgreSQL. Each key's executions reach the receiver one at a time, in the
 * order accepted, whichever worker claims them, while keys run in parallel on both workers; a
 * late, older event is skipped however the workers race. (test/queue/concurrency-keys.int.test.ts:
 * the same on SQLite.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster, within } from '../helpers/cluster.js';
import {
  type Api,
  expectFifoPerKey,
  expectNewestWins,
  keyedWorkflow,
  type Receiver,
  sendInRandomArrival,
  startReceiver,
} from '../queue/concurrency-scenario.js';

let cluster: Cluster;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver(5);
  cluster = await startCluster({
    webhooks: 1,
    workers: 2,
    env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' },
  });
});

afterAll(async () => {
  await cluster?.close();
  await receiver?.close();
});

const api: Api = (method, route, body) => cluster.api(cluster.webhooks[0]!, method, route, body);

async function activeWorkflow(definition: Record<string, unknown>): Promise<string> {
  const created = await api('POST', '/api/v1/workflows', definition);
  expect(created.status).toBe(201);
  expect((await api('POST', `/api/v1/workflows/${created.body.id}/activate`)).status).toBe(200);
  return created.body.id;
}

const sender = (path: string) => async (body: unknown) => {
  const res = await fetch(`${cluster.webhooks[0]!.url}/webhook/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBeLessThan(300);
  return res.headers.get('x-hookflow-execution-id')!;
};

describe('concurrency keys across two workers (PostgreSQL)', () => {
  it('20 keys × 50 events in random arrival: one at a time per key, in the order accepted, on both workers', async () => {
    await activeWorkflow(keyedWorkflow('fifo', receiver.url, { key: '{{ body.customer }}' }));
    const accepted = await sendInRandomArrival(sender('fifo'), 20, 50);
    await within(
      90_000,
      async () => receiver.calls.filter((c) => c.key.startsWith('cus_')).length >= 1000,
      100,
    );
    expectFifoPerKey(receiver, accepted, 50);
    const done = await cluster.sql.query(
      `select count(*) as n from executions where concurrency_key like 'cus_%' and status = 'succeeded'`,
    );
    expect(Number(done.rows[0].n)).toBe(1000);
  }, 150_000);

  it('newest wins across workers: late, older events are skipped (superseded), equal ones run', async () => {
    const id = await activeWorkflow(
      keyedWorkflow('newest', receiver.url, {
        key: '{{ body.customer }}',
        newestWins: '{{ body.updated }}',
      }),
    );
    await expectNewestWins(api, sender('newest'), receiver, id);
  }, 60_000);
});
