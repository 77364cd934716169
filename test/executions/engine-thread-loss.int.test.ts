/**
 * When the executor's engine thread has to go, only the execution that caused it fails. Over real
 * HTTP:
 * - A JSONata regular expression that backtracks for minutes overruns the execution budget (4 s
 *   here): the watchdog terminates the engine thread and fails that execution with
 *   `execution_timeout`; another execution, waiting on a slow HTTP server on the same thread at that
 *   moment, runs again (attempt 2) and succeeds, instead of failing for good.
 * - An execution that exhausts the engine thread's heap (HOOKFLOW_ENGINE_MEMORY_MB) kills the
 *   thread, runs once more, and is failed once, saying why, when it does it again: not retried
 *   until the queue gives up.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishedExecution } from '../engine/int-helpers.js';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';

const BUDGET_MS = 4_000;

/** A server whose first call to /first hangs until the test ends; later calls answer at once. */
async function startHangingOnce() {
  const held: http.ServerResponse[] = [];
  const calls: string[] = [];
  const server = http.createServer((req, res) => {
    calls.push(req.url ?? '');
    if (req.url?.startsWith('/slow')) {
      const ms = Number(new URL(req.url, 'http://x').searchParams.get('ms'));
      setTimeout(() => res.end('{"slow":true}'), ms);
      return;
    }
    if (calls.filter((c) => c.startsWith('/first')).length === 1) {
      held.push(res);
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end('{"answered":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((r) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const post = (server: TestServer, path: string, body: unknown) =>
  fetch(`${server.url}/webhook/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('the engine thread terminated for one execution', () => {
  let server: TestServer;
  let downstream: Awaited<ReturnType<typeof startHangingOnce>>;

  beforeAll(async () => {
    downstream = await startHangingOnce();
    server = await startTestServer({
      env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true', HOOKFLOW_EXECUTION_TIMEOUT_MS: String(BUDGET_MS) },
    });
    // First an outbound call (the thread is free meanwhile), then minutes of one regular
    // expression (`(a+)+$` on 36 a's and a `!`), which nothing inside the thread can interrupt.
    await createActiveWorkflow(server, {
      name: 'stuck',
      trigger: { path: 'stuck' },
      steps: [
        { name: 'first', type: 'http', method: 'GET', url: `${downstream.url}/slow?ms=2500` },
        { name: 'match', type: 'set', fields: { m: '{{ $contains($trigger.body.s, /^(a+)+$/) }}' } },
      ],
    });
    await createActiveWorkflow(server, {
      name: 'patient',
      trigger: { path: 'patient' },
      steps: [{ name: 'call', type: 'http', method: 'GET', url: `${downstream.url}/first` }],
    });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await downstream?.close();
  });

  it('fails the overrunning execution and runs the bystander again, which succeeds', async () => {
    const stuck = await post(server, 'stuck', { s: `${'a'.repeat(36)}!` });
    const stuckId = stuck.headers.get('x-hookflow-execution-id')!;
    await eventually(async () => downstream.calls.some((c) => c.startsWith('/slow')), 10_000);
    // The bystander starts while the stuck one waits on its call, and is on the thread (waiting on
    // /first, which never answers the first time) when the regular expression takes the thread.
    await new Promise((r) => setTimeout(r, 1_000));
    const patient = await post(server, 'patient', {});
    const patientId = patient.headers.get('x-hookflow-execution-id')!;
    await eventually(async () => downstream.calls.some((c) => c.startsWith('/first')), 10_000);

    const failed = await finishedExecution(server, stuckId, 30_000);
    expect(failed.status).toBe('failed');
    expect(failed.error.code).toBe('execution_timeout');
    const ran = await finishedExecution(server, patientId, 30_000);
    expect(ran.status).toBe('succeeded');
    expect(ran.attempt).toBe(2);
    expect(ran.steps[0].output.body).toEqual({ answered: true });
    expect(downstream.calls.filter((c) => c.startsWith('/first'))).toHaveLength(2);
  }, 60_000);
});

describe('the engine thread out of memory', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ env: { HOOKFLOW_ENGINE_MEMORY_MB: '64' } });
    // The code step keeps the workflow off the before-commit path: it runs on the engine thread.
    // Then a loop whose every iteration outputs a string of 100 KB: 2 000 of them (200 MB) are
    // past the thread's 64 MB heap, grown a little at a time (each expression well within its
    // own budget).
    await createActiveWorkflow(server, {
      name: 'hog',
      trigger: { path: 'hog' },
      steps: [
        { name: 'js', type: 'code', source: 'return $input.body' },
        {
          name: 'grow',
          type: 'forEach',
          items: '{{ [1..2000] }}',
          steps: [
            { name: 'part', type: 'set', fields: { s: '{{ $pad("", 100000, "x") & $string($item) }}' } },
          ],
        },
      ],
    });
    await createActiveWorkflow(server, {
      name: 'light',
      trigger: { path: 'light', response: { mode: 'lastStep' } },
      steps: [{ name: 'js', type: 'code', source: 'return { n: $input.body.n + 1 }' }],
    });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  it('runs the execution once more, then fails it once, clearly; the next execution runs', async () => {
    const res = await post(server, 'hog', {});
    const id = res.headers.get('x-hookflow-execution-id')!;
    const record = await finishedExecution(server, id, 40_000);
    expect(record.status).toBe('failed');
    expect(record.attempt).toBe(2);
    expect(record.error.message).toMatch(
      /^The execution used more memory than the engine allows \(HOOKFLOW_ENGINE_MEMORY_MB: 64 MB\)/,
    );
    const light = await post(server, 'light', { n: 1 });
    expect(light.status).toBe(200);
    expect(await light.json()).toEqual({ n: 2 });
  }, 60_000);
});
