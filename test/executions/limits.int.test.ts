/**
 * The executor's bounds from config: at most HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT executions at once
 * (those waiting on the network included; test/executions/in-flight.int.test.ts shows them beyond
 * HOOKFLOW_EXECUTOR_CONCURRENCY), and each within HOOKFLOW_EXECUTION_TIMEOUT_MS.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Downstream, FORM, finishedExecution, startDownstream } from '../engine/int-helpers.js';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let downstream: Downstream;

beforeAll(async () => {
  downstream = await startDownstream();
  server = await startTestServer({
    env: {
      HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
      HOOKFLOW_EXECUTOR_CONCURRENCY: '1',
      HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT: '1',
      HOOKFLOW_EXECUTION_TIMEOUT_MS: '1000',
    },
  });
});

afterAll(async () => {
  await server?.close();
  await downstream?.close();
});

const start = async (path: string) => {
  const res = await fetch(`${server.url}/webhook/${path}`, { method: 'POST', headers: FORM, body: 'a=1' });
  expect(res.status).toBe(200);
  return res.headers.get('x-hookflow-execution-id')!;
};

it('holds no more executions at once than the configured in-flight cap', async () => {
  await createActiveWorkflow(server, {
    name: 'pause',
    trigger: { path: 'pause' },
    steps: [{ name: 'wait', type: 'http', url: `${downstream.url}/slow?ms=200` }],
  });
  // A first run warms the engine thread up: its first outbound call (connection, lookups, lazily
  // loaded modules) took over this file's 1 s budget on a loaded machine.
  await finishedExecution(server, await start('pause'));
  const ids = [await start('pause'), await start('pause'), await start('pause')];
  const runs = await Promise.all(ids.map((id) => finishedExecution(server, id)));
  expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  const spans = runs
    .map((r) => [Date.parse(r.steps[0].startedAt), Date.parse(r.steps[0].finishedAt)] as const)
    .sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
});

it('fails an execution that runs past its time budget, naming the step', async () => {
  await createActiveWorkflow(server, {
    name: 'too-slow',
    trigger: { path: 'too-slow' },
    steps: [{ name: 'wait', type: 'http', url: `${downstream.url}/slow?ms=3000`, timeoutMs: 10_000 }],
  });
  const execution = await finishedExecution(server, await start('too-slow'));
  expect(execution.status).toBe('failed');
  expect(execution.error.step).toBe('wait');
  expect(execution.error).toMatchObject({ code: 'execution_timeout' });
  expect(execution.error.message).toMatch(
    /ran longer than its budget of 1000 ms \(HOOKFLOW_EXECUTION_TIMEOUT_MS\)/,
  );
  expect(Date.parse(execution.finishedAt) - Date.parse(execution.startedAt)).toBeLessThan(2_500);
});
