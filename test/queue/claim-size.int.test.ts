/**
 * Alone on its store (SQLite), the executor claims a backlog many rows at a time (CLAIM_PER_SLOT
 * per slot, queue/slots.ts), and claimed rows wait in memory, trigger JSON and all, until one may
 * start (HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT, 1 here). A claim therefore stops once the rows waiting hold 4 MiB of trigger JSON
 * (store/queue.ts claimDue, `maxChars`), and the backlog is still drained to the last row: a claim
 * that stopped on size is not taken for one that found the queue empty.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { type Downstream, startDownstream } from '../engine/int-helpers.js';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let downstream: Downstream;

beforeAll(async () => {
  downstream = await startDownstream();
  // One slot and one in flight: room for 8 claimed rows (CLAIM_PER_SLOT × 1), so the size cap is
  // what stops a claim.
  server = await startTestServer({
    env: {
      HOOKFLOW_EXECUTOR_CONCURRENCY: '1',
      HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT: '1',
      HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
    },
  });
});

afterAll(async () => {
  await server?.close();
  await downstream?.close();
});

it('a backlog of 1.1 MB items is claimed at most 4 at a time, each claim right after a run, to the last row', async () => {
  // An http step makes the workflow not pure: each execution is stored queued and claimed.
  await createActiveWorkflow(server, {
    name: 'big items',
    trigger: { path: 'big' },
    steps: [{ name: 'wait', type: 'http', url: `${downstream.url}/slow?ms=60` }],
  });
  const N = 16;
  const pad = 'x'.repeat(1_100_000);
  const db = server.hookflow.store.db;
  const running: number[] = [];
  let gaps: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const r = await sql<{ n: number }>`
        select count(*) as n from executions where status = 'running'`.execute(db);
      running.push(Number(r.rows[0]!.n));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  try {
    const ids = await Promise.all(
      Array.from({ length: N }, async (_, n) => {
        const res = await fetch(`${server.url}/webhook/big`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ n, pad }),
        });
        expect(res.status).toBe(200);
        return res.headers.get('x-hookflow-execution-id')!;
      }),
    );
    await eventually(async () => {
      const r = await sql<{ n: number }>`
        select count(*) as n from executions where status = 'succeeded'`.execute(db);
      return Number(r.rows[0]!.n) === N || undefined;
    }, 20_000);
    const { rows } = await sql<{
      id: string;
      attempt: number;
      created_at: string;
      started_at: string;
      finished_at: string;
    }>`
      select id, attempt, created_at, started_at, finished_at from executions
       where status = 'succeeded' order by started_at`.execute(db);
    expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(rows.filter((r) => r.attempt !== 1)).toEqual([]);
    // One slot: the next claim follows the end of a run at once (a row's started_at is when it
    // was claimed; rows claimed with an earlier one get a negative gap). A claim that stopped on
    // size keeps the backlog, so the slot freed pokes the next claim; had it been taken for an
    // empty queue, that claim would wait for the poll, up to 1 s later (640–900 ms, measured).
    gaps = rows
      .slice(1)
      .filter((r, i) => r.created_at < rows[i]!.finished_at)
      .map((r, i) => Date.parse(r.started_at) - Date.parse(rows[i]!.finished_at));
  } finally {
    sampling = false;
    await sampler;
  }
  // Claimed rows are `running` until their result is committed: the one whose result is being
  // written, the one in the slot and those waiting for it. A claim comes only when none waits and
  // takes rows while less than 4 MiB waits (4 rows of 1.1 MB: 0, 1.1, 2.2 and 3.3 MB before each):
  // at most 5 at once. Without the cap a claim took 8 (8 at once, measured).
  const most = Math.max(...running);
  console.log(
    `big items: at most ${most} running at once (${running.length} samples); gaps ${gaps.join(', ')} ms`,
  );
  expect(most).toBeGreaterThanOrEqual(2);
  expect(most).toBeLessThanOrEqual(5);
  expect(Math.max(...gaps)).toBeLessThan(250);
});
