/**
 * Concurrency keys and newest wins (SPEC 7d) across processes: one `hookflow webhook` and two
 * `hookflow worker`s on PostgreSQL. Each key's executions reach the receiver one at a time, in the
 * order accepted, whichever worker claims them, while keys run in parallel on both workers; a
 * late, older event is skipped however the workers race. (test/queue/concurrency-keys.int.test.ts:
 * the same on SQLite.)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster, within } from '../helpers/cluster.js';
import {
  type Api,
  activator,
  expectFifoScenario,
  expectNewestWins,
  keyedWorkflow,
  type Receiver,
  senderTo,
  startReceiver,
} from '../queue/concurrency-scenario.js';

/** Short, so that a SIGKILLed worker's execution runs again within the test. */
const LEASE_MS = 3_000;

let cluster: Cluster;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver(5);
  cluster = await startCluster({
    webhooks: 1,
    workers: 2,
    env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true', HOOKFLOW_LEASE_MS: String(LEASE_MS) },
  });
});

afterAll(async () => {
  await cluster?.close();
  await receiver?.close();
});

const api: Api = (method, route, body) => cluster.api(cluster.webhooks[0]!, method, route, body);

const activeWorkflow = activator(api);
const sender = senderTo(() => cluster.webhooks[0]!.url);

describe('concurrency keys across two workers (PostgreSQL)', () => {
  it('20 keys × 50 events in random arrival: one at a time per key, in the order accepted, on both workers', async () => {
    await expectFifoScenario({ api, send: sender, receiver }, { key: '{{ body.customer }}' }, 90_000);
    // The last call was answered; its result is recorded a moment later.
    await within(
      10_000,
      async () =>
        Number(
          (
            await cluster.sql.query(
              `select count(*) as n from executions where concurrency_key like 'cus_%' and status = 'succeeded'`,
            )
          ).rows[0].n,
        ) === 1000,
      50,
    );
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

  it("a SIGKILLed worker's execution holds its key until its lease lapses, then runs again before the rest of its key", async () => {
    // A receiver that never answers the first call of seq 0 (the worker dies waiting for it).
    const seen: { seq: number; attempt: number }[] = [];
    let held = false;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { seq: number; attempt: number };
        seen.push(call);
        if (call.seq === 0 && !held) {
          held = true;
          return;
        }
        res.setHeader('content-type', 'application/json');
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await activeWorkflow({
        name: 'crash',
        trigger: { path: 'crash' },
        settings: { concurrency: { key: '{{ body.customer }}' } },
        steps: [
          {
            name: 'call',
            type: 'http',
            method: 'POST',
            url,
            body: '{{ {"seq": body.seq, "attempt": $execution.attempt} }}',
          },
        ],
      });
      const first = await sender('crash')({ customer: 'cus_crash', seq: 0 });
      await within(15_000, async () => held, 20);
      const rest = [
        await sender('crash')({ customer: 'cus_crash', seq: 1 }),
        await sender('crash')({ customer: 'cus_crash', seq: 2 }),
      ];
      const lockedBy = (await cluster.sql.query('select locked_by from executions where id = $1', [first]))
        .rows[0].locked_by as string;
      const victim = cluster.workers.find((w) => lockedBy.split(':').at(-2) === String(w.pid))!;
      expect(victim).toBeDefined();
      victim.child.kill('SIGKILL');
      await victim.exited;
      // While the dead worker's lease lasts, nothing of the key runs: seq 1 and 2 wait.
      expect(seen).toEqual([{ seq: 0, attempt: 1 }]);
      await within(30_000, async () => seen.length >= 4, 50);
      // The lapsed execution ran again first (attempt 2), then the others in order.
      expect(seen).toEqual([
        { seq: 0, attempt: 1 },
        { seq: 0, attempt: 2 },
        { seq: 1, attempt: 1 },
        { seq: 2, attempt: 1 },
      ]);
      for (const id of [first, ...rest])
        await within(
          10_000,
          async () => (await api('GET', `/api/v1/executions/${id}`)).body.status === 'succeeded',
          50,
        );
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  }, 90_000);
});
