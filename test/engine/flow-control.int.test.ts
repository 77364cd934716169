/**
 * SPEC 7b over real HTTP: workflows with if/switch/forEach/code/wait/fail saved through the API
 * (validation errors naming nested pointers, syntax errors of code at save), called through their
 * webhook URLs (lastStep answers with the output), and their execution records as the API shows
 * them (branch, nested steps, iterations, iterationCount, logs, status waiting).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';
import { finishedExecution } from './int-helpers.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    env: { HOOKFLOW_FOREACH_MAX_ITEMS: '50', HOOKFLOW_CODE_TIMEOUT_MS: '300', HOOKFLOW_CODE_MEMORY_MB: '16' },
  });
});
afterAll(() => server.close());

let n = 0;
/** An active workflow answering lastStep; returns a function that calls it with a JSON body. */
async function flow(steps: unknown[], headersIn: Record<string, string> = {}) {
  const path = `flow-${++n}`;
  await createActiveWorkflow(server, {
    name: path,
    trigger: { path, response: { mode: 'lastStep', timeoutMs: 20_000 } },
    steps,
  });
  return async (body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}/webhook/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headersIn, ...headers },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    const id =
      res.headers.get('x-hookflow-execution-id') ??
      (JSON.parse(text) as { executionId?: string }).executionId;
    const execution = id ? await finishedExecution(server, id, 20_000) : undefined;
    return { status: res.status, body: text ? JSON.parse(text) : undefined, execution };
  };
}

const save = (steps: unknown[]) => server.api('POST', '/api/v1/workflows', { name: 'check', steps });

describe('switch over HTTP (the GitHub routing case)', () => {
  let call: Awaited<ReturnType<typeof flow>>;
  beforeAll(async () => {
    call = await flow([
      {
        type: 'switch',
        name: 'route',
        value: '{{ headers."x-github-event" }}',
        cases: [
          {
            equals: 'push',
            steps: [{ type: 'set', name: 'push', fields: { kind: 'push', ref: '{{ body.ref }}' } }],
          },
          { when: '{{ $contains(headers."x-github-event", "issue") }}', steps: [] },
          { equals: 'ping', steps: [{ type: 'set', name: 'pong', fields: { kind: 'pong' } }] },
        ],
        default: [{ type: 'set', name: 'other', fields: { kind: 'other' } }],
      },
    ]);
  });

  it('equals: runs the case, records branch = its index and the nested records', async () => {
    const r = await call({ ref: 'main' }, { 'x-github-event': 'push' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ kind: 'push', ref: 'main' });
    const rec = r.execution.steps[0];
    expect(rec).toMatchObject({ name: 'route', type: 'switch', status: 'succeeded', branch: 0 });
    expect(rec.steps).toHaveLength(1);
    expect(rec.steps[0]).toMatchObject({
      name: 'push',
      type: 'set',
      status: 'succeeded',
      output: { kind: 'push', ref: 'main' },
    });
  });

  it('when, with an empty case list: outputs its input', async () => {
    const r = await call({ action: 'opened' }, { 'x-github-event': 'issues' });
    expect(r.execution.steps[0]).toMatchObject({ branch: 1, steps: [] });
    expect(r.body.body).toEqual({ action: 'opened' });
  });

  it('no case matches: default', async () => {
    const r = await call({}, { 'x-github-event': 'star' });
    expect(r.body).toEqual({ kind: 'other' });
    expect(r.execution.steps[0].branch).toBe('default');
  });

  it('no case and no default: the input goes on, no branch recorded', async () => {
    const plain = await flow([
      { type: 'switch', name: 's', value: '{{ body.n }}', cases: [{ equals: 1, steps: [] }] },
      { type: 'set', name: 'after', fields: { n: '{{ body.n }}' } },
    ]);
    const r = await plain({ n: 2 });
    expect(r.body).toEqual({ n: 2 });
    expect(r.execution.steps[0].branch).toBeUndefined();
    expect(r.execution.steps[0].steps).toEqual([]);
  });

  it('equals is JSON equality: 1 is not "1", objects match whatever their key order', async () => {
    const typed = await flow([
      {
        type: 'switch',
        name: 's',
        value: '{{ body.v }}',
        cases: [
          { equals: '1', steps: [{ type: 'set', name: 'str', fields: { was: 'string' } }] },
          {
            equals: { a: 1, b: [true, null] },
            steps: [{ type: 'set', name: 'obj', fields: { was: 'object' } }],
          },
        ],
        default: [{ type: 'set', name: 'neither', fields: { was: 'neither' } }],
      },
    ]);
    expect((await typed({ v: 1 })).body).toEqual({ was: 'neither' });
    expect((await typed({ v: '1' })).body).toEqual({ was: 'string' });
    expect((await typed({ v: { b: [true, null], a: 1 } })).body).toEqual({ was: 'object' });
  });
});

describe('if over HTTP', () => {
  it('then / else, an empty else, a filter inside ending the run filtered', async () => {
    const call = await flow([
      {
        type: 'if',
        name: 'big',
        condition: '{{ body.amount > 100 }}',
        then: [{ type: 'set', name: 'tag', fields: { size: 'big' } }],
        else: [{ type: 'filter', name: 'drop-small', condition: '{{ body.keep = true }}' }],
      },
    ]);
    const big = await call({ amount: 500 });
    expect(big.body).toEqual({ size: 'big' });
    expect(big.execution.steps[0]).toMatchObject({ branch: 'then', steps: [{ name: 'tag' }] });
    const kept = await call({ amount: 5, keep: true });
    expect(kept.execution.status).toBe('succeeded');
    expect(kept.execution.steps[0].branch).toBe('else');
    const small = await call({ amount: 5 });
    expect(small.execution.status).toBe('filtered');
    expect(small.execution.steps[0]).toMatchObject({
      status: 'filtered',
      steps: [{ name: 'drop-small', status: 'filtered' }],
    });
  });
});

describe('forEach over HTTP', () => {
  it('order lines: $item/$index, filtered iterations dropped, records per iteration', async () => {
    const call = await flow([
      {
        type: 'forEach',
        name: 'lines',
        items: '{{ body.lines }}',
        steps: [
          { type: 'filter', name: 'in-stock', condition: '{{ qty > 0 }}' },
          {
            type: 'set',
            name: 'line',
            fields: { sku: '{{ $item.sku }}', at: '{{ $index }}', total: '{{ qty * price }}' },
          },
        ],
      },
      { type: 'set', name: 'sum', fields: { lines: '{{ $ }}', total: '{{ $sum($.total) }}' } },
    ]);
    const r = await call({
      lines: [
        { sku: 'a', qty: 2, price: 5 },
        { sku: 'b', qty: 0, price: 9 },
        { sku: 'c', qty: 1, price: 3 },
      ],
    });
    expect(r.body).toEqual({
      lines: [
        { sku: 'a', at: 0, total: 10 },
        { sku: 'c', at: 2, total: 3 },
      ],
      total: 13,
    });
    const rec = r.execution.steps[0];
    expect(rec).toMatchObject({ name: 'lines', type: 'forEach', status: 'succeeded', iterationCount: 3 });
    expect(rec.iterations.map((i: { index: number; status: string }) => [i.index, i.status])).toEqual([
      [0, 'succeeded'],
      [1, 'filtered'],
      [2, 'succeeded'],
    ]);
    expect(rec.iterations[1].steps).toHaveLength(1);
    expect(rec.iterations[0].steps.map((s: { name: string }) => s.name)).toEqual(['in-stock', 'line']);
  });

  it('nested loops: the inner $item shadows the outer', async () => {
    const call = await flow([
      {
        type: 'forEach',
        name: 'orders',
        items: '{{ body.orders }}',
        steps: [
          {
            type: 'forEach',
            name: 'items',
            items: '{{ $item.items }}',
            steps: [{ type: 'set', name: 'it', fields: { name: '{{ $item }}', i: '{{ $index }}' } }],
          },
          { type: 'set', name: 'order', fields: { id: '{{ $item.id }}', items: '{{ $ }}' } },
        ],
      },
    ]);
    const r = await call({
      orders: [
        { id: 1, items: ['x', 'y'] },
        { id: 2, items: [] },
      ],
    });
    expect(r.body).toEqual([
      {
        id: 1,
        items: [
          { name: 'x', i: 0 },
          { name: 'y', i: 1 },
        ],
      },
      { id: 2, items: [] },
    ]);
  });

  it('items not an array → the step fails (500 execution_failed); more than HOOKFLOW_FOREACH_MAX_ITEMS too', async () => {
    const call = await flow([{ type: 'forEach', name: 'l', items: '{{ body.lines }}', steps: [] }]);
    const r = await call({ lines: 'nope' });
    expect(r.status).toBe(500);
    expect(r.execution.status).toBe('failed');
    expect(r.execution.error).toMatchObject({ step: 'l', field: '/items' });
    expect(r.execution.error.message).toMatch(/must be an array, but it gave a string/);
    const many = await call({ lines: Array.from({ length: 51 }, (_, i) => i) });
    expect(many.execution.error.message).toMatch(/at most 50 \(HOOKFLOW_FOREACH_MAX_ITEMS\)/);
    const empty = await call({ lines: [] });
    expect(empty.body).toEqual([]);
    expect(empty.execution.steps[0]).toMatchObject({ iterationCount: 0, iterations: [] });
  });
});

describe('respond nested in a branch (respondStep)', () => {
  it('the first respond that ran answers, nested or not', async () => {
    const path = `respond-${++n}`;
    await createActiveWorkflow(server, {
      name: path,
      trigger: { path, response: { mode: 'respondStep', timeoutMs: 20_000 } },
      steps: [
        {
          type: 'switch',
          name: 'route',
          value: '{{ body.kind }}',
          // A body past the early-answer size (worker.ts) is answered from the stored records.
          cases: [
            {
              equals: 'a',
              steps: [
                { type: 'respond', name: 'answer-a', status: 202, body: { got: 'a', pad: 'x'.repeat(7000) } },
              ],
            },
          ],
          default: [{ type: 'respond', name: 'answer-other', status: 201, body: { got: '{{ body.kind }}' } }],
        },
        { type: 'respond', name: 'too-late', status: 200, body: { got: 'late' } },
      ],
    });
    const call = (kind: string) =>
      fetch(`${server.url}/webhook/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind }),
      });
    const a = await call('a');
    expect(a.status).toBe(202);
    expect(await a.json()).toEqual({ got: 'a', pad: 'x'.repeat(7000) });
    const b = await call('b');
    expect(b.status).toBe(201);
    expect(await b.json()).toEqual({ got: 'b' });
  });
});

describe('fail over HTTP', () => {
  it('fails the execution with its message', async () => {
    const call = await flow([
      {
        type: 'if',
        name: 'bad',
        condition: '{{ $not($exists(body.id)) }}',
        then: [{ type: 'fail', name: 'refuse', message: 'No id in {{ $string(body) }}' }],
      },
    ]);
    const r = await call({ x: 1 });
    expect(r.status).toBe(500);
    expect(r.execution.status).toBe('failed');
    expect(r.execution.error).toEqual({ step: 'refuse', message: 'No id in {"x":1}' });
    expect(r.execution.steps[0]).toMatchObject({ status: 'failed', branch: 'then' });
  });
});

describe('code over HTTP', () => {
  it('returns its value, keeps console.log lines', async () => {
    const call = await flow([
      {
        type: 'code',
        name: 'double',
        source:
          'console.log("got", $input.body.amount);\nreturn { total: $input.body.amount * 2, id: $execution.id.length > 0 };',
      },
    ]);
    const r = await call({ amount: 21 });
    expect(r.body).toEqual({ total: 42, id: true });
    expect(r.execution.steps[0]).toMatchObject({ type: 'code', status: 'succeeded', logs: ['got 21'] });
  });

  it('throwing, an endless loop, memory exhaustion and require/process/fetch fail the step, and the server goes on', async () => {
    const cases: [string, RegExp][] = [
      ['const a = 1;\nthrow new Error("nope")', /^Error: nope \(at 2:\d+\)$/],
      ['for (;;) {}', /longer than its limit of 300 ms/],
      ['return "x".repeat(64 << 20).length', /memory limit of 16 MB/],
      ['return require("fs")', /require' is not defined\. The code step runs in a sandbox without require/],
      ['return process.env', /process' is not defined/],
      ['return fetch("http://127.0.0.1/")', /fetch' is not defined/],
    ];
    for (const [source, message] of cases) {
      const call = await flow([{ type: 'code', name: 'js', source }]);
      const r = await call({});
      expect(r.status, source).toBe(500);
      expect(r.execution.error.message, source).toMatch(message);
      expect(r.execution.error.step).toBe('js');
    }
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const ok = await flow([{ type: 'code', name: 'js', source: 'return 1' }]);
    expect((await ok({})).body).toBe(1);
  });

  it('a syntax error is 400 validation_failed at save, with its position', async () => {
    const res = await save([
      { type: 'set', name: 'a', fields: {} },
      {
        type: 'forEach',
        name: 'l',
        items: '{{ [] }}',
        steps: [{ type: 'code', name: 'c', source: 'let x = 1;\nreturn x +* 2;' }],
      },
    ]);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    const field = res.body.fields.find((f: { field: string }) => f.field === '/steps/1/steps/0/source');
    expect(field.message).toMatch(/SyntaxError: .*\(at 2:\d+\)/);
  });
});

describe('wait over HTTP', () => {
  it('a top-level wait makes the execution waiting, with resumeAt and the records so far', async () => {
    const path = `wait-${++n}`;
    await createActiveWorkflow(server, {
      name: path,
      trigger: { path },
      steps: [
        { type: 'set', name: 'first', fields: { v: 1 } },
        { type: 'wait', name: 'pause', seconds: 3600 },
        { type: 'set', name: 'later', fields: { v: 2 } },
      ],
    });
    const res = await fetch(`${server.url}/webhook/${path}`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    const { executionId } = (await res.json()) as { executionId: string };
    const execution = await eventually(async () => {
      const r = await server.api('GET', `/api/v1/executions/${executionId}`);
      return r.body.status === 'waiting' ? r.body : undefined;
    }, 10_000);
    expect(Date.parse(execution.resumeAt)).toBeGreaterThan(Date.now() + 3_500_000);
    expect(execution.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ['first', 'succeeded'],
      ['pause', 'waiting'],
    ]);
    const list = await server.api('GET', '/api/v1/executions?status=waiting');
    expect(list.body.items.map((e: { id: string }) => e.id)).toContain(executionId);
  });

  it('seconds 0 and a past time do not wait; more than 30 days fails', async () => {
    const call = await flow([
      { type: 'wait', name: 'zero', seconds: 0 },
      { type: 'wait', name: 'past', until: '2001-01-01T00:00:00Z' },
      { type: 'wait', name: 'far', until: '{{ body.until }}' },
    ]);
    const far = await call({ until: new Date(Date.now() + 31 * 86_400_000).toISOString() });
    expect(far.status).toBe(500);
    expect(far.execution.error).toMatchObject({ step: 'far', field: '/until' });
    expect(far.execution.error.message).toMatch(/at most 30 days/);
    const now = await call({ until: new Date(Date.now() - 1000).toISOString() });
    expect(now.status).toBe(200);
  });
});

describe('validation of nested steps on save', () => {
  it('names the nested pointer of a bad expression', async () => {
    const res = await save([
      {
        type: 'switch',
        name: 's',
        value: '{{ body.x }}',
        cases: [
          { equals: 1, steps: [] },
          { when: '{{ true }}', steps: [{ type: 'if', name: 'i', condition: '{{ body. }}', then: [] }] },
        ],
      },
    ]);
    expect(res.status).toBe(400);
    expect(res.body.fields[0].field).toBe('/steps/0/cases/1/steps/0/condition');
  });

  it('names are unique across nesting; depth is limited to 10 levels; unknown nested types refused', async () => {
    const dup = await save([
      { type: 'set', name: 'a', fields: {} },
      {
        type: 'if',
        name: 'i',
        condition: '{{ true }}',
        then: [],
        else: [{ type: 'set', name: 'a', fields: {} }],
      },
    ]);
    expect(dup.status).toBe(400);
    expect(dup.body.fields).toEqual([
      { field: '/steps/1/else/0/name', message: expect.stringMatching(/duplicate step name "a"/) },
    ]);

    let deep: unknown[] = [{ type: 'set', name: 'leaf', fields: {} }];
    for (let i = 10; i >= 1; i--) deep = [{ type: 'if', name: `l${i}`, condition: '{{ true }}', then: deep }];
    const tooDeep = await save(deep);
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.fields[0].message).toMatch(/more than 10 levels/);

    const unknown = await save([
      { type: 'forEach', name: 'l', items: '{{ [] }}', steps: [{ type: 'telegram', name: 'e' }] },
    ]);
    expect(unknown.body.fields[0].field).toBe('/steps/0/steps/0/type');
  });

  it('a case needs equals or when; wait needs seconds or until', async () => {
    const res = await save([
      { type: 'switch', name: 's', value: 1, cases: [{ steps: [] }] },
      { type: 'wait', name: 'w' },
    ]);
    expect(res.status).toBe(400);
    expect(res.body.fields.map((f: { field: string }) => f.field)).toEqual([
      '/steps/0/cases/0',
      '/steps/1/seconds',
    ]);
  });

  it('a saved workflow with nested steps comes back as it was sent', async () => {
    const steps = [
      {
        type: 'forEach',
        name: 'l',
        items: '{{ body }}',
        steps: [
          {
            type: 'if',
            name: 'i',
            condition: '{{ true }}',
            then: [{ type: 'code', name: 'c', source: 'return {{a:1}}' }],
          },
        ],
      },
    ];
    const bad = await save(steps);
    expect(bad.status).toBe(400); // `{{a:1}}` is a block in JavaScript: `return {` … a syntax error
    steps[0]!.steps[0]!.then[0]!.source = 'return { a: "{{ kept as text }}" }';
    const res = await save(steps);
    expect(res.status).toBe(201);
    expect(res.body.steps).toEqual(steps);
  });
});
