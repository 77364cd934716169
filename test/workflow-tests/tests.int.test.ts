/**
 * Tests from captured traffic (SPEC 7g) over real HTTP: made from a production execution, run
 * against the published version (passes) and a draft whose `set` step changed (fails, with the
 * step's diff), with nothing sent to the API the workflow calls and nothing stored; `hookflow test`
 * exits 1 on the failing draft.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/process.js';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let api: http.Server;
let apiUrl: string;
let calls = 0;

beforeAll(async () => {
  api = http.createServer((_req, res) => {
    calls++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ price: 10 }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  server = await startTestServer({ env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
});
afterAll(async () => {
  await server.close();
  await new Promise((resolve) => api.close(resolve));
});

const steps = (factor: number) => [
  { type: 'set', name: 'shape', fields: { qty: '{{ body.qty }}' } },
  { type: 'http', name: 'price', method: 'POST', url: `${apiUrl}/price`, body: { qty: '{{ qty }}' } },
  {
    type: 'forEach',
    name: 'each',
    items: '{{ [1, 2] }}',
    steps: [{ type: 'http', name: 'notify', method: 'GET', url: `${apiUrl}/notify?n={{ $item }}` }],
  },
  {
    type: 'set',
    name: 'total',
    fields: { total: `{{ $steps.shape.qty * $steps.price.body.price * ${factor} }}` },
  },
];

async function finished(executionId: string) {
  return eventually(async () => {
    const e = (await server.api('GET', `/api/v1/executions/${executionId}`)).body;
    return e.status === 'succeeded' && e;
  });
}

async function executionCount(): Promise<number> {
  const rows = await server.hookflow.store.db.selectFrom('executions').select('id').execute();
  return rows.length;
}

describe('tests from captured traffic', () => {
  it('records effects as mocks, passes on the published version and fails on a changed draft, sending nothing', async () => {
    const wf = await createActiveWorkflow(server, {
      name: 'orders',
      trigger: { path: 'wt-orders' },
      steps: steps(1),
    });
    const res = await fetch(`${server.url}/webhook/wt-orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ qty: 3 }),
    });
    const { executionId } = (await res.json()) as { executionId: string };
    await finished(executionId);
    expect(calls).toBe(3);

    const made = await server.api('POST', `/api/v1/workflows/${wf.id}/tests`, {
      name: 'three widgets',
      fromExecutionId: executionId,
    });
    expect(made.status).toBe(201);
    expect(Object.keys(made.body.mocks).sort()).toEqual(['notify.0', 'notify.1', 'price']);
    expect(made.body.mocks.price.output).toMatchObject({ status: 200, body: { price: 10 } });
    expect(made.body.expected).toMatchObject({ status: 'succeeded', output: { total: 30 } });
    expect(Object.keys(made.body.expected.steps).sort()).toEqual([
      'each',
      'notify.0',
      'notify.1',
      'price',
      'shape',
      'total',
    ]);
    expect(made.body.item).toMatchObject({ body: { qty: 3 } });

    const stored = await executionCount();
    const published = await server.api('POST', `/api/v1/workflows/${wf.id}/tests/run`, {
      target: 'published',
    });
    expect(published.status).toBe(200);
    expect(published.body).toMatchObject({ target: 'published', passed: 1, failed: 0 });
    expect(published.body.results[0].steps.every((s: { result: string }) => s.result === 'same')).toBe(true);

    // A draft whose set step doubles the total.
    const { name, trigger, settings } = (await server.api('GET', `/api/v1/workflows/${wf.id}`)).body;
    expect(
      (await server.api('PUT', `/api/v1/workflows/${wf.id}`, { name, trigger, settings, steps: steps(2) }))
        .status,
    ).toBe(200);
    const draft = await server.api('POST', `/api/v1/workflows/${wf.id}/tests/run`, { target: 'draft' });
    expect(draft.body).toMatchObject({ target: 'draft', passed: 0, failed: 1 });
    const result = draft.body.results[0];
    expect(result.status).toBe('failed');
    expect(result.steps.filter((s: { result: string }) => s.result !== 'same')).toEqual([
      {
        step: 'total',
        result: 'changed',
        expected: { status: 'succeeded', output: { total: 30 } },
        actual: { status: 'succeeded', output: { total: 60 } },
      },
    ]);
    expect(result.outcome.actual.output).toEqual({ total: 60 });

    // Nothing left the server, nothing was stored.
    expect(calls).toBe(3);
    expect(await executionCount()).toBe(stored);

    // The CLI: exit 1 on the failing draft, 0 on the published version.
    const failing = await runCli(['test', wf.id, '--target', 'draft', '--url', server.url], {
      HOOKFLOW_TOKEN: server.token,
    });
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain('FAIL  three widgets');
    expect(failing.stdout).toContain('total: changed');
    expect(failing.stdout).toContain('0 passed, 1 failed (draft');
    const passing = await runCli(['test', wf.id, '--url', server.url], { HOOKFLOW_TOKEN: server.token });
    expect(passing.code).toBe(0);
    expect(passing.stdout).toContain('PASS  three widgets');

    // The expectation is editable: accept the new total, and the draft passes.
    const testId = made.body.id;
    const expected = { ...made.body.expected, output: { total: 60 } };
    expected.steps.total.output = { total: 60 };
    expect((await server.api('PUT', `/api/v1/workflows/${wf.id}/tests/${testId}`, { expected })).status).toBe(
      200,
    );
    expect(
      (await server.api('POST', `/api/v1/workflows/${wf.id}/tests/run`, { target: 'draft' })).body.passed,
    ).toBe(1);
  });

  it('fails a step the test has no recording of, naming it, instead of calling out', async () => {
    const wf = await createActiveWorkflow(server, {
      name: 'new step',
      trigger: { path: 'wt-new' },
      steps: steps(1).slice(0, 1),
    });
    const res = await fetch(`${server.url}/webhook/wt-new`, { method: 'POST', body: 'qty=2' });
    const { executionId } = (await res.json()) as { executionId: string };
    await finished(executionId);
    const made = await server.api('POST', `/api/v1/workflows/${wf.id}/tests`, {
      name: 'before',
      fromExecutionId: executionId,
    });
    expect(made.status).toBe(201);
    const { name, trigger, settings } = (await server.api('GET', `/api/v1/workflows/${wf.id}`)).body;
    await server.api('PUT', `/api/v1/workflows/${wf.id}`, {
      name,
      trigger,
      settings,
      steps: steps(1).slice(0, 2),
    });
    const before = calls;
    const run = await server.api('POST', `/api/v1/workflows/${wf.id}/tests/run`, { target: 'draft' });
    expect(run.body.failed).toBe(1);
    expect(run.body.results[0].run.error.message).toContain('no recorded output for step "price"');
    expect(run.body.results[0].steps.find((s: { step: string }) => s.step === 'price')).toMatchObject({
      result: 'added',
    });
    expect(calls).toBe(before);
  });

  it('is made from a test event too, and refuses what it cannot make a test from', async () => {
    const wf = await createActiveWorkflow(server, {
      name: 'events',
      trigger: { path: 'wt-events' },
      steps: steps(1).slice(0, 1),
    });
    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, {})).status).toBeLessThan(
      300,
    );
    expect(
      (
        await fetch(`${server.url}/webhook-test/wt-events`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'qty=5',
        })
      ).status,
    ).toBe(200);
    const events = (await server.api('GET', `/api/v1/workflows/${wf.id}/test-events`)).body;
    const event = (events.items ?? events)[0];
    await finished(event.executionId);
    const made = await server.api('POST', `/api/v1/workflows/${wf.id}/tests`, {
      name: 'from a capture',
      fromTestEventId: event.id,
    });
    expect(made.status).toBe(201);
    expect(made.body.expected.steps.shape.output).toEqual({ qty: '5' });
    expect(
      (await server.api('POST', `/api/v1/workflows/${wf.id}/tests/run`, { target: 'draft' })).body.passed,
    ).toBe(1);

    const neither = await server.api('POST', `/api/v1/workflows/${wf.id}/tests`, { name: 'x' });
    expect(neither.status).toBe(400);
    expect(neither.body.code).toBe('validation_failed');
    const unknown = await server.api('POST', `/api/v1/workflows/${wf.id}/tests`, {
      name: 'x',
      fromExecutionId: 'nope',
    });
    expect(unknown.status).toBe(404);
    expect((await server.api('GET', `/api/v1/workflows/${wf.id}/tests`)).body.items).toHaveLength(1);
    expect((await server.api('DELETE', `/api/v1/workflows/${wf.id}/tests/${made.body.id}`)).status).toBe(204);
    expect((await server.api('GET', `/api/v1/workflows/${wf.id}/tests/${made.body.id}`)).status).toBe(404);
  });
});
