/**
 * Issue 14, finding 5: one heavy execution must not hold up anyone else. Four fields that each
 * compare every item with every other (`$count(items.(… items[price > $p]))`, ~0.3–0.5 s of
 * JSONata each here) make an execution of 1–2 s; while it runs, another workflow's webhook must
 * still be committed and answered, and `/healthz` answered, each within 200 ms — whether the heavy
 * workflow is pure (run before its commit: on SQLite's writer thread, on PostgreSQL by the webhook
 * process) or has an `http` step (run by the executor). The heavy execution itself ends
 * succeeded, or failed with a budget error in its record.
 *
 * The body is small (~6 KB) on purpose: the issue's 3 MB body also costs its own intake (parsing;
 * on SQLite writing the 3 MB row and claiming it, which blocks the event loop on a busy disk),
 * which is not the execution's doing and would be measured here too. The JSONata work is the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Downstream, startDownstream } from '../engine/int-helpers.js';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';
import { getExecution } from '../webhooks/webhook-http.js';

/** The issue's budget for another request's answer while the heavy execution runs. */
const BUDGET_MS = 200;

const ITEMS = 250;
const prices = Array.from({ length: ITEMS }, (_, i) => (i * 7919) % 1000);

/** ~6 KB of JSON: 250 items with a price each. */
const heavyBody = (): string => JSON.stringify({ items: prices.map((price, id) => ({ id, price })) });

/** Each field compares every item's price with every other's: ITEMS² predicate evaluations. */
const pairs = (offset: number) =>
  `{{ $count(body.items.($p := price + ${offset}; $$.body.items[price > $p])) }}`;
const HEAVY_FIELDS = { above: pairs(0), above1: pairs(1), above2: pairs(2), above3: pairs(3) };

/** What `above` counts: pairs (a, b) with b.price > a.price. */
const expectedAbove = (): number => prices.reduce((n, p) => n + prices.filter((q) => q > p).length, 0);

async function statusOf(server: TestServer, id: string): Promise<string> {
  const row = await server.hookflow.store.db
    .selectFrom('executions')
    .select('status')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return row.status;
}

interface Probe {
  webhookMs: number[];
  healthMs: number[];
}

async function timed(fn: () => Promise<Response>): Promise<number> {
  const started = performance.now();
  const res = await fn();
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  return performance.now() - started;
}

/**
 * Sends `heavy`, and while it is in flight (and until its execution has finished) calls the light
 * webhook and /healthz in turn; returns their latencies and the heavy execution's record.
 */
async function probeWhileHeavy(server: TestServer, heavyPath: string, lightPath: string, body = heavyBody()) {
  const post = (path: string, data: string) =>
    fetch(`${server.url}/webhook/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: data,
    });
  // Warm up: the light path and the health route have answered once before the heavy one starts.
  await timed(() => post(lightPath, '{"n":1}'));
  await timed(() => fetch(`${server.url}/healthz`));

  const started = performance.now();
  let heavyId: string | undefined;
  let heavyAnsweredMs: number | undefined;
  const heavy = post(heavyPath, body).then(async (res) => {
    heavyAnsweredMs = performance.now() - started;
    expect(res.status).toBe(200);
    heavyId = res.headers.get('x-hookflow-execution-id') ?? undefined;
    await res.arrayBuffer();
  });
  // Let the request arrive.
  await new Promise((r) => setTimeout(r, 50));

  const probe: Probe = { webhookMs: [], healthMs: [] };
  let finished = false;
  for (let i = 0; !finished; i++) {
    probe.webhookMs.push(await timed(() => post(lightPath, `{"n":${i}}`)));
    probe.healthMs.push(await timed(() => fetch(`${server.url}/healthz`)));
    // Its status straight from the store (the API's record would be answered on the same event loop).
    if (heavyId !== undefined) finished = !['queued', 'running'].includes(await statusOf(server, heavyId));
    if (performance.now() - started > 60_000) throw new Error('the heavy execution never finished');
    await new Promise((r) => setTimeout(r, 20));
  }
  await heavy;
  const record = await getExecution(server, heavyId!);
  const heavyMs = Date.parse(record.finishedAt) - Date.parse(record.createdAt ?? record.startedAt);
  const max = (xs: number[]) => Math.round(Math.max(...xs));
  console.info(
    `${heavyPath}: heavy answered after ${Math.round(heavyAnsweredMs!)} ms, finished ${record.status} ` +
      `after ~${heavyMs} ms (started after ${Date.parse(record.startedAt) - Date.parse(record.createdAt)} ms, attempt ${record.attempt}); ${probe.webhookMs.length} probes: webhook max ${max(probe.webhookMs)} ms, ` +
      `/healthz max ${max(probe.healthMs)} ms${record.error ? `; ${JSON.stringify(record.error).slice(0, 200)}` : ''}`,
  );
  return { probe, record };
}

function expectWithinBudget({ probe, record }: Awaited<ReturnType<typeof probeWhileHeavy>>): void {
  // Probed while it ran, not only after.
  expect(probe.webhookMs.length).toBeGreaterThanOrEqual(3);
  expect(Math.max(...probe.webhookMs)).toBeLessThan(BUDGET_MS);
  expect(Math.max(...probe.healthMs)).toBeLessThan(BUDGET_MS);
  if (record.status === 'failed') expect(record.error.code).toMatch(/^(budget_time|execution_timeout)$/);
  else expect(record.status).toBe('succeeded');
  if (record.status === 'succeeded') {
    const count = record.steps.find((s: { name: string }) => s.name === 'count');
    expect(count.output).toMatchObject({ above: expectedAbove() });
  }
}

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
])('%s', (_name, postgres) => {
  let server: TestServer;
  let downstream: Downstream;

  beforeAll(async () => {
    downstream = await startDownstream();
    server = await startTestServer({ postgres, env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
    await createActiveWorkflow(server, {
      name: 'light',
      trigger: { path: 'light' },
      steps: [{ name: 'shape', type: 'set', fields: { n: '{{ body.n }}' } }],
    });
    await createActiveWorkflow(server, {
      name: 'heavy-pure',
      trigger: { path: 'heavy-pure' },
      steps: [{ name: 'count', type: 'set', fields: HEAVY_FIELDS }],
    });
    await createActiveWorkflow(server, {
      name: 'heavy-http',
      trigger: { path: 'heavy-http' },
      steps: [
        { name: 'count', type: 'set', fields: HEAVY_FIELDS },
        { name: 'send', type: 'http', method: 'POST', url: `${downstream.url}/echo`, body: '{{ $ }}' },
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await downstream?.close();
  });

  it('a heavy pure workflow delays neither another webhook nor /healthz', async () => {
    expectWithinBudget(await probeWhileHeavy(server, 'heavy-pure', 'light'));
  }, 90_000);

  it('a heavy workflow with an http step delays neither another webhook nor /healthz', async () => {
    const result = await probeWhileHeavy(server, 'heavy-http', 'light');
    expectWithinBudget(result);
    if (result.record.status === 'succeeded')
      await eventually(async () => downstream.received.some((r) => r.path === '/echo'));
  }, 90_000);
});

/**
 * What no budget check can interrupt: one regular expression that backtracks (`(a+)+$` on 31 a's
 * and a `!`: ~10 s of V8's regexp engine, hours with 40). Such workflows never run before their
 * commit; the executor's engine thread is stopped when one overruns its budget (1 s here) by the
 * grace it had to stop by itself, and started again for what comes next.
 */
describe('an expression stuck in one regular expression', () => {
  let server: TestServer;
  let downstream: Downstream;
  const stuck = { name: 'match', type: 'set', fields: { m: '{{ $contains(body.s, /^(a+)+$/) }}' } };

  beforeAll(async () => {
    downstream = await startDownstream();
    server = await startTestServer({
      env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true', HOOKFLOW_EXECUTION_TIMEOUT_MS: '1000' },
    });
    await createActiveWorkflow(server, {
      name: 'light',
      trigger: { path: 'light' },
      steps: [{ name: 'shape', type: 'set', fields: { n: '{{ body.n }}' } }],
    });
    await createActiveWorkflow(server, {
      name: 'stuck-pure',
      trigger: { path: 'stuck-pure' },
      steps: [stuck],
    });
    await createActiveWorkflow(server, {
      name: 'after',
      trigger: { path: 'after' },
      steps: [
        { name: 'send', type: 'http', method: 'POST', url: `${downstream.url}/echo`, body: '{{ body }}' },
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await downstream?.close();
  });

  it('fails with execution_timeout, delaying nobody, and the executor goes on', async () => {
    const s = `${'a'.repeat(31)}!`;
    const { probe, record } = await probeWhileHeavy(server, 'stuck-pure', 'light', JSON.stringify({ s }));
    expect(Math.max(...probe.webhookMs)).toBeLessThan(BUDGET_MS);
    expect(Math.max(...probe.healthMs)).toBeLessThan(BUDGET_MS);
    expect(record.status).toBe('failed');
    expect(record.error.code).toBe('execution_timeout');
    expect(record.error.message).toMatch(/budget of 1000 ms \(HOOKFLOW_EXECUTION_TIMEOUT_MS\)/);
    // The restarted thread runs the next execution, http step included.
    const res = await fetch(`${server.url}/webhook/after`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"after":true}',
    });
    const id = res.headers.get('x-hookflow-execution-id')!;
    await eventually(async () => ['succeeded', 'failed'].includes(await statusOf(server, id)), 10_000);
    expect((await getExecution(server, id)).status).toBe('succeeded');
  }, 60_000);
});
