/**
 * The executor over real HTTP (SPEC 5 and 7): a form POST flows through set → filter → http →
 * respond; lastStep answers with the last output; a failing step answers 500 and a slow one 504
 * (and still finishes); test mode answers the same way; runaway expressions are stopped by their
 * budget while the service keeps serving; invalid steps are refused on save.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, createWorkflow, startTestServer, type TestServer } from '../helpers/server.js';
import { type Downstream, FORM, finishedExecution, startDownstream } from './int-helpers.js';

interface ErrorBody {
  code: string;
  message: string;
  executionId: string;
}

let server: TestServer;
let downstream: Downstream;
const ids: Record<string, string> = {};

const post = (path: string, body: string, headers: Record<string, string> = FORM) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers, body });

beforeAll(async () => {
  downstream = await startDownstream();
  // The downstream service listens on loopback: this server may reach private networks.
  server = await startTestServer({ env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });

  ids.order = (
    await createActiveWorkflow(server, {
      name: 'order',
      trigger: { path: 'order', response: { mode: 'respondStep' } },
      steps: [
        {
          name: 'shape',
          type: 'set',
          fields: {
            'customer.first': '{{ body.param1 }}',
            'customer.second': '{{ body.param2 }}',
            label: 'Order from {{ body.param1 }}/{{ body.param2 }}',
            size: '{{ $count($keys(body)) }}',
            isA: '{{ body.param1 = "a" }}',
          },
        },
        { name: 'only-a', type: 'filter', condition: '{{ isA }}' },
        {
          name: 'notify',
          type: 'http',
          method: 'POST',
          url: `${downstream.url}/echo`,
          headers: { 'x-execution': '{{ $execution.id }}' },
          body: { who: '{{ customer.first }}', label: '{{ label }}', size: '{{ size }}' },
        },
        {
          name: 'answer',
          type: 'respond',
          status: 201,
          headers: { 'x-label': '{{ $steps.shape.label }}' },
          body: {
            ok: true,
            echoed: '{{ body.received }}',
            downstreamStatus: '{{ status }}',
            mode: '{{ $execution.mode }}',
          },
        },
      ],
    })
  ).id;

  ids.last = (
    await createActiveWorkflow(server, {
      name: 'last',
      trigger: { path: 'last', response: { mode: 'lastStep' } },
      steps: [
        {
          name: 'greet',
          type: 'set',
          fields: { greeting: 'Hello {{ body.param1 }}', n: '{{ $number(body.n) * 2 }}' },
        },
      ],
    })
  ).id;

  ids.broken = (
    await createActiveWorkflow(server, {
      name: 'broken',
      trigger: { path: 'broken', response: { mode: 'lastStep' } },
      steps: [
        { name: 'prepare', type: 'set', fields: { x: 1 } },
        { name: 'call', type: 'http', method: 'POST', url: `${downstream.url}/fail`, body: { x: '{{ x }}' } },
        { name: 'never', type: 'set', fields: { y: 2 } },
      ],
    })
  ).id;

  ids.slow = (
    await createActiveWorkflow(server, {
      name: 'slow',
      trigger: { path: 'slow', response: { mode: 'lastStep', timeoutMs: 300 } },
      steps: [{ name: 'wait', type: 'http', url: `${downstream.url}/slow?ms=1000` }],
    })
  ).id;

  ids.runaway = (
    await createActiveWorkflow(server, {
      name: 'runaway',
      trigger: { path: 'runaway', response: { mode: 'lastStep' } },
      steps: [
        {
          name: 'recurse',
          type: 'set',
          fields: { x: '{{ ($f := function($n){ 1 + $f($n + 1) }; $f(0)) }}' },
        },
      ],
    })
  ).id;

  ids.spin = (
    await createActiveWorkflow(server, {
      name: 'spin',
      trigger: { path: 'spin', response: { mode: 'lastStep' } },
      steps: [
        { name: 'work', type: 'set', fields: { x: '{{ ($loop := function(){ $loop() }; $loop()) }}' } },
      ],
    })
  ).id;
});

afterAll(async () => {
  await server?.close();
  await downstream?.close();
});

describe('respondStep: set → filter → http → respond', () => {
  it('answers a form POST with the status, headers and body the respond step built', async () => {
    const res = await post('/webhook/order', 'param1=a&param2=b');
    expect(res.status).toBe(201);
    const executionId = res.headers.get('x-hookflow-execution-id');
    expect(executionId).toBeTruthy();
    expect(res.headers.get('x-label')).toBe('Order from a/b');
    expect(await res.json()).toEqual({
      ok: true,
      echoed: { who: 'a', label: 'Order from a/b', size: 2 },
      downstreamStatus: 200,
      mode: 'production',
    });

    const call = downstream.received.find((r) => r.headers['x-execution'] === executionId);
    expect(call).toMatchObject({
      method: 'POST',
      path: '/echo',
      body: { who: 'a', label: 'Order from a/b', size: 2 },
    });
  });

  it('records every step with its input, output, status and timings on the execution', async () => {
    const res = await post('/webhook/order', 'param1=a&param2=b');
    const execution = await finishedExecution(server, res.headers.get('x-hookflow-execution-id')!);
    expect(execution.status).toBe('succeeded');
    expect(execution.error).toBeNull();
    expect(
      execution.steps.map((s: { name: string; type: string; status: string }) => [s.name, s.type, s.status]),
    ).toEqual([
      ['shape', 'set', 'succeeded'],
      ['only-a', 'filter', 'succeeded'],
      ['notify', 'http', 'succeeded'],
      ['answer', 'respond', 'succeeded'],
    ]);
    const [shape, filter, notify, answer] = execution.steps;
    expect(shape.input.body).toEqual({ param1: 'a', param2: 'b' });
    expect(shape.output).toEqual({
      customer: { first: 'a', second: 'b' },
      label: 'Order from a/b',
      size: 2,
      isA: true,
    });
    expect(filter.output).toEqual(shape.output);
    expect(notify.input).toEqual(shape.output);
    expect(notify.output).toMatchObject({ status: 200, body: { received: { who: 'a' } } });
    expect(answer.output).toMatchObject({ status: 201, headers: { 'x-label': 'Order from a/b' } });
    for (const step of execution.steps) {
      expect(step.error).toBeNull();
      expect(Date.parse(step.finishedAt)).toBeGreaterThanOrEqual(Date.parse(step.startedAt));
    }
  });

  it('ends as filtered when the condition is false, without running the later steps', async () => {
    const before = downstream.received.length;
    const res = await post('/webhook/order', 'param1=z&param2=b');
    // No respond step ran.
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ message: 'Workflow finished without a respond step' });
    const execution = await finishedExecution(server, res.headers.get('x-hookflow-execution-id')!);
    expect(execution.status).toBe('filtered');
    expect(execution.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ['shape', 'succeeded'],
      ['only-a', 'filtered'],
    ]);
    expect(downstream.received.length).toBe(before);
  });

  it('answers a test-mode call the same way', async () => {
    const listener = await server.api('POST', `/api/v1/workflows/${ids.order}/test-listener`, {
      timeoutSeconds: 60,
    });
    expect(listener.status).toBe(201);
    const res = await post('/webhook-test/order', 'param1=a&param2=b');
    expect(res.status).toBe(201);
    expect(res.headers.get('x-label')).toBe('Order from a/b');
    expect(await res.json()).toMatchObject({ ok: true, mode: 'test' });
  });
});

describe('respondStep: the answer goes out when the respond step has run', () => {
  it('does not wait for a slow step after it, and the execution still finishes', async () => {
    await createActiveWorkflow(server, {
      name: 'respond-early',
      trigger: { path: 'respond-early', response: { mode: 'respondStep' } },
      steps: [
        { name: 'answer', type: 'respond', status: 202, body: { accepted: '{{ body.param1 }}' } },
        { name: 'slow', type: 'http', url: `${downstream.url}/slow?ms=1500` },
      ],
    });
    const started = Date.now();
    const res = await post('/webhook/respond-early', 'param1=a');
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ accepted: 'a' });
    expect(Date.now() - started).toBeLessThan(1200);
    const execution = await finishedExecution(server, res.headers.get('x-hookflow-execution-id')!);
    expect(execution.status).toBe('succeeded');
    expect(execution.steps.map((s: { name: string }) => s.name)).toEqual(['answer', 'slow']);
  });

  it('keeps the answer of a respond step that ran when a later step fails', async () => {
    await createActiveWorkflow(server, {
      name: 'respond-then-fail',
      trigger: { path: 'respond-then-fail', response: { mode: 'respondStep' } },
      steps: [
        { name: 'answer', type: 'respond', status: 200, body: { ok: true } },
        { name: 'call', type: 'http', url: `${downstream.url}/fail` },
      ],
    });
    const res = await post('/webhook/respond-then-fail', 'param1=a');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    const execution = await finishedExecution(server, res.headers.get('x-hookflow-execution-id')!);
    expect(execution.status).toBe('failed');
    expect(execution.error).toMatchObject({ step: 'call' });
  });
});

describe('lastStep', () => {
  it("answers 200 with the last step's output", async () => {
    const res = await post('/webhook/last', 'param1=a&n=21');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-hookflow-execution-id')).toBeTruthy();
    expect(await res.json()).toEqual({ greeting: 'Hello a', n: 42 });
  });

  it('answers a test-mode call the same way', async () => {
    const wf = await createWorkflow(server, {
      name: 'last-test',
      trigger: { path: 'last-test', response: { mode: 'lastStep' } },
      steps: [{ name: 'greet', type: 'set', fields: { greeting: 'Hello {{ body.param1 }}' } }],
    });
    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, {})).status).toBe(201);
    const res = await post('/webhook-test/last-test', 'param1=t');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ greeting: 'Hello t' });
  });

  it('answers 500 execution_failed with the execution id when a step fails', async () => {
    const res = await post('/webhook/broken', 'param1=a');
    expect(res.status).toBe(500);
    const body = (await res.json()) as ErrorBody;
    const executionId = res.headers.get('x-hookflow-execution-id');
    // The caller learns nothing of the step's error (test/webhooks/response-safety.int.test.ts).
    expect(body).toMatchObject({ code: 'execution_failed', executionId, message: 'The workflow failed.' });

    const execution = await finishedExecution(server, executionId!);
    expect(execution.status).toBe('failed');
    expect(execution.error).toMatchObject({ step: 'call' });
    expect(execution.error.message).toContain('answered 500');
    expect(execution.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ['prepare', 'succeeded'],
      ['call', 'failed'],
    ]);
    // The failed request's response is kept for whoever debugs it.
    expect(execution.steps[1].output).toMatchObject({ status: 500, body: { error: 'downstream is broken' } });
  });

  it('answers 504 with the execution id when timeoutMs passes, and the execution still finishes', async () => {
    const started = Date.now();
    const res = await post('/webhook/slow', 'param1=a');
    expect(res.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(900);
    const body = (await res.json()) as ErrorBody;
    const executionId = res.headers.get('x-hookflow-execution-id');
    expect(body).toMatchObject({ code: 'execution_timeout', executionId });

    const execution = await finishedExecution(server, executionId!);
    expect(execution.status).toBe('succeeded');
    expect(execution.steps[0].output).toMatchObject({ status: 200, body: { slow: true } });
  });
});

describe('expression budgets', () => {
  it('stops a deep recursion by its depth budget, with a clear error', async () => {
    const res = await post('/webhook/runaway', 'param1=a');
    expect(res.status).toBe(500);
    const body = (await res.json()) as ErrorBody;
    expect(body.code).toBe('execution_failed');
    const execution = await finishedExecution(server, body.executionId);
    expect(execution.error).toMatchObject({ step: 'recurse', field: '/fields/x', code: 'budget_depth' });
    expect(execution.error.message).toMatch(/nested deeper than its budget of 1000 levels/);
  });

  it('stops an endless loop by its time budget while the service keeps serving', async () => {
    // Test and server share one event loop, so "keeps serving" is measured as the longest the
    // loop went without a turn while the expression ran (it would be ~1000 ms if it never yielded).
    let last = Date.now();
    let longestGap = 0;
    const ticker = setInterval(() => {
      const now = Date.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 10);
    const pending = post('/webhook/spin', 'param1=a');
    const health: Promise<Response>[] = [];
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 150));
      health.push(fetch(`${server.url}/healthz`));
    }
    const res = await pending;
    clearInterval(ticker);
    expect(res.status).toBe(500);
    const body = (await res.json()) as ErrorBody;
    expect(body.code).toBe('execution_failed');
    const execution = await finishedExecution(server, body.executionId);
    expect(execution.error).toMatchObject({ step: 'work' });
    expect(execution.error.message).toMatch(/ran longer than its budget of 1000 ms/);
    for (const h of await Promise.all(health)) expect(h.status).toBe(200);
    // The loop yields every 10 ms; the bound leaves room for a busy CI machine.
    expect(longestGap).toBeLessThan(400);

    // And the next execution runs as usual.
    const after = await post('/webhook/last', 'param1=b&n=1');
    expect(await after.json()).toEqual({ greeting: 'Hello b', n: 2 });
  });
});

describe('validation on save', () => {
  it.each<[string, Record<string, unknown>[], string, RegExp]>([
    [
      'an unknown step type',
      [{ name: 'a', type: 'carrier-pigeon' }],
      '/steps/0/type',
      /unknown step type "carrier-pigeon"/,
    ],
    [
      'duplicate step names',
      [
        { name: 'a', type: 'set', fields: {} },
        { name: 'a', type: 'filter', condition: true },
      ],
      '/steps/1/name',
      /duplicate step name "a"/,
    ],
    [
      'an expression that does not compile',
      [{ name: 'a', type: 'set', fields: { total: '{{ $sum(body.x }}' } }],
      '/steps/0/fields/total',
      /expression does not compile: .*at position \d+/,
    ],
    [
      'a field of the wrong type',
      [{ name: 'a', type: 'http', url: 'https://example.com', timeoutMs: 'soon' }],
      '/steps/0/timeoutMs',
      /must be integer/,
    ],
  ])(
    'refuses %s with 400 validation_failed naming the step and field',
    async (_name, steps, field, message) => {
      const res = await server.api('POST', '/api/v1/workflows', { name: 'bad', steps });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.fields[0].field).toBe(field);
      expect(res.body.fields[0].message).toMatch(message);
    },
  );

  it('refuses a bad step on PATCH as well', async () => {
    const res = await server.api('PATCH', `/api/v1/workflows/${ids.last}`, {
      steps: [{ name: 'x', type: 'set', fields: { a: '{{ ) }}' } }],
    });
    expect(res.status).toBe(400);
    expect(res.body.fields[0].field).toBe('/steps/0/fields/a');
  });
});
