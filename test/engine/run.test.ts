import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPEN_NETWORK, Outbound } from '../../src/engine/network.js';
import { Engine, OutOfSlice } from '../../src/engine/run.js';
import { validateSteps } from '../../src/engine/validate.js';
import type { Step, Workflow } from '../../src/model/workflow.js';

let server: http.Server;
let base: string;
const engine = new Engine({
  allowPrivateNetwork: true,
  executionTimeoutMs: 5_000,
  outbound: new Outbound(OPEN_NETWORK),
});

beforeAll(async () => {
  server = http.createServer((req, res) => {
    setTimeout(() => res.end('{"ok":true}'), req.url === '/slow' ? 2_000 : 0);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await engine.close();
  await new Promise((r) => server.close(r));
});

let n = 0;
const workflow = (steps: Record<string, unknown>[]): Workflow => ({
  id: `wf-${++n}`,
  name: 'test',
  active: true,
  version: 1,
  publishedVersion: 1,
  trigger: {} as Workflow['trigger'],
  steps: steps as Step[],
  createdAt: '',
  updatedAt: '',
});

const item = { method: 'POST', body: { param1: 'a', param2: 'b' } };
const ctx = { executionId: 'ex-1', mode: 'production' as const };

describe('Engine.run', () => {
  it('runs steps in order, each on the previous output, and records each', async () => {
    const result = await engine.run(
      workflow([
        {
          name: 'shape',
          type: 'set',
          fields: { first: '{{ body.param1 }}', both: '{{ body.param1 & body.param2 }}' },
        },
        {
          name: 'more',
          type: 'set',
          fields: {
            again: '{{ first }}',
            fromSteps: '{{ $steps.shape.both }}',
            mode: '{{ $execution.mode }}',
          },
        },
      ]),
      item,
      ctx,
    );
    expect(result.status).toBe('succeeded');
    expect(result.error).toBeNull();
    expect(result.output).toEqual({ again: 'a', fromSteps: 'ab', mode: 'production' });
    expect(result.steps.map((s) => [s.name, s.type, s.status])).toEqual([
      ['shape', 'set', 'succeeded'],
      ['more', 'set', 'succeeded'],
    ]);
    expect(result.steps[0]!.input).toEqual(item);
    expect(result.steps[1]!.input).toEqual({ first: 'a', both: 'ab' });
    for (const s of result.steps)
      expect(Date.parse(s.finishedAt)).toBeGreaterThanOrEqual(Date.parse(s.startedAt));
  });

  it('returns the item itself when there are no steps', async () => {
    expect(await engine.run(workflow([]), item, ctx)).toMatchObject({
      status: 'succeeded',
      output: item,
      steps: [],
    });
  });

  it('ends as filtered at a false filter, without running the rest', async () => {
    const result = await engine.run(
      workflow([
        { name: 'only-b', type: 'filter', condition: '{{ body.param1 = "b" }}' },
        { name: 'never', type: 'set', fields: { x: 1 } },
      ]),
      item,
      ctx,
    );
    expect(result.status).toBe('filtered');
    expect(result.steps.map((s) => [s.name, s.status])).toEqual([['only-b', 'filtered']]);
  });

  it('fails the execution at a failing step, naming it, without running the rest', async () => {
    const result = await engine.run(
      workflow([
        { name: 'ok', type: 'set', fields: { n: 1 } },
        { name: 'boom', type: 'set', fields: { total: '{{ n + "x" }}' } },
        { name: 'never', type: 'set', fields: {} },
      ]),
      item,
      ctx,
    );
    expect(result.status).toBe('failed');
    expect(result.steps.map((s) => [s.name, s.status])).toEqual([
      ['ok', 'succeeded'],
      ['boom', 'failed'],
    ]);
    expect(result.error).toMatchObject({
      step: 'boom',
      field: '/fields/total',
      expression: ' n + "x" ',
      position: 4,
    });
    expect(result.error!.message).toMatch(
      /^The expression \{\{ n \+ "x" \}\} in \/fields\/total failed: .* \(at position 4\)$/,
    );
    expect(result.steps[1]!.error).toEqual(result.error);
  });

  it('checks the rendered values against the step type', async () => {
    const result = await engine.run(
      workflow([{ name: 'r', type: 'respond', status: '{{ "abc" }}' }]),
      item,
      ctx,
    );
    expect(result.error).toMatchObject({ step: 'r', field: '/status' });
    expect(result.error!.message).toContain('/status must be integer');
  });

  it('still refuses a stored configuration the step type does not take, with or without expressions', async () => {
    // A version saved by an older hookflow, say: the rendered configuration is checked against the
    // step type's schema before every run, with or without expressions in it.
    for (const fields of [{ x: 1 }, { x: '{{ body.param1 }}' }]) {
      const result = await engine.run(workflow([{ name: 's', type: 'set', fields, extra: 1 }]), item, ctx);
      expect(result.status).toBe('failed');
      expect(result.error).toMatchObject({ step: 's', field: '/extra' });
    }
  });

  it('keeps the first respond step as the response and goes on', async () => {
    const result = await engine.run(
      workflow([
        {
          name: 'answer',
          type: 'respond',
          status: 201,
          headers: { 'x-a': '{{ body.param1 }}' },
          body: { got: '{{ body.param2 }}' },
        },
        { name: 'again', type: 'respond', status: 500 },
        { name: 'after', type: 'set', fields: { done: true } },
      ]),
      item,
      ctx,
    );
    expect(result.status).toBe('succeeded');
    expect(result.response).toEqual({ status: 201, headers: { 'x-a': 'a' }, body: { got: 'b' } });
    expect(result.output).toEqual({ done: true });
  });

  it('stops an execution that runs past its budget, naming the step', async () => {
    const quick = new Engine({
      allowPrivateNetwork: true,
      executionTimeoutMs: 200,
      outbound: new Outbound(OPEN_NETWORK),
    });
    const started = Date.now();
    const result = await quick.run(
      workflow([{ name: 'wait', type: 'http', url: `${base}/slow` }]),
      item,
      ctx,
    );
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ step: 'wait' });
    expect(result.error).toMatchObject({ code: 'execution_timeout' });
    expect(result.error!.message).toMatch(/ran longer than its budget of 200 ms/);
    await quick.close();
  });

  it('stops a pure workflow at its budget inside an expression, not only between steps', async () => {
    // The expression's own budget (10 s here) would let it run on; the execution's (200 ms) stops it.
    const quick = new Engine({
      allowPrivateNetwork: false,
      executionTimeoutMs: 200,
      expressionBudget: { timeoutMs: 10_000, maxDepth: 1_000 },
    });
    const started = Date.now();
    const result = await quick.run(
      workflow([{ name: 'spin', type: 'set', fields: { x: '{{ $sum([1..10000000].($ * 2)) }}' } }]),
      item,
      ctx,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ step: 'spin', code: 'execution_timeout' });
    await quick.close();
  });

  it('gives up a run past its slice with OutOfSlice, recording nothing', async () => {
    const started = Date.now();
    const run = engine.run(
      workflow([
        { name: 'quick', type: 'set', fields: { a: '{{ body.param1 }}' } },
        { name: 'spin', type: 'set', fields: { x: '{{ $sum([1..10000000].($ * 2)) }}' } },
      ]),
      item,
      { ...ctx, sliceMs: 5 },
    );
    await expect(run).rejects.toBeInstanceOf(OutOfSlice);
    expect(Date.now() - started).toBeLessThan(1_000);
    // A slice the run fits in changes nothing.
    const fits = await engine.run(
      workflow([{ name: 'quick', type: 'set', fields: { a: '{{ body.param1 }}' } }]),
      item,
      {
        ...ctx,
        sliceMs: 1_000,
      },
    );
    expect(fits.status).toBe('succeeded');
  });

  it('gives up with OutOfSlice past its slice inside a branch too, not failing the step that holds it', async () => {
    const run = engine.run(
      workflow([
        {
          name: 'route',
          type: 'switch',
          value: '{{ body.param1 }}',
          cases: [
            {
              equals: 'a',
              steps: [{ name: 'spin', type: 'set', fields: { x: '{{ $sum([1..10000000].($ * 2)) }}' } }],
            },
          ],
        },
      ]),
      item,
      { ...ctx, sliceMs: 5 },
    );
    await expect(run).rejects.toBeInstanceOf(OutOfSlice);
  });

  it.each([
    ['a pure workflow', { name: 's', type: 'set', fields: { a: '{{ $uppercase(body.param1) }}' } }, true],
    ['an http step', { name: 'h', type: 'http', url: 'http://example.com/' }, false],
    [
      'a regular expression',
      { name: 's', type: 'set', fields: { a: '{{ $match(body.param1, /a+/) }}' } },
      false,
    ],
    ['$eval', { name: 's', type: 'set', fields: { a: 'x {{ $eval("1 + 1") }}' } }, false],
  ])('runs before its commit only when it can be interrupted: %s', (_, step, expected) => {
    expect(engine.runsBeforeCommit(workflow([step]))).toBe(expected);
  });

  it('stops a runaway expression with a clear error', async () => {
    const result = await engine.run(
      workflow([{ name: 'loop', type: 'set', fields: { x: '{{ ($f := function(){ 1 + $f() }; $f()) }}' } }]),
      item,
      ctx,
    );
    expect(result.error).toMatchObject({ step: 'loop', field: '/fields/x', code: 'budget_depth' });
  });

  it('runs an http step with expressions in its request', async () => {
    const result = await engine.run(
      workflow([
        {
          name: 'call',
          type: 'http',
          method: 'POST',
          url: `${base}/{{ body.param1 }}`,
          body: { v: '{{ body.param2 }}' },
        },
      ]),
      item,
      ctx,
    );
    expect(result).toMatchObject({ status: 'succeeded', output: { status: 200, body: '{"ok":true}' } });
  });
});

describe('validateSteps', () => {
  it('accepts a valid workflow', () => {
    expect(
      validateSteps([
        { name: 'a', type: 'set', fields: { x: '{{ body.y }}' } },
        { name: 'b', type: 'filter', condition: '{{ x > 1 }}' },
        { name: 'c', type: 'http', method: 'POST', url: 'https://example.com/{{ x }}', timeoutMs: 5000 },
        { name: 'd', type: 'respond', status: 201, body: { n: '{{ $steps.a.x }}' } },
      ] as Step[]),
    ).toEqual([]);
  });

  it.each<[string, Record<string, unknown>[], { field: string; message: RegExp }]>([
    [
      'an unknown type',
      [{ name: 'a', type: 'telegram' }],
      {
        field: '/steps/0/type',
        message:
          /unknown step type "telegram" \(known: set, filter, http, respond, if, switch, forEach, code, wait, fail, .*\)/,
      },
    ],
    [
      'a duplicate name',
      [
        { name: 'a', type: 'set', fields: {} },
        { name: 'a', type: 'set', fields: {} },
      ],
      { field: '/steps/1/name', message: /duplicate step name "a"/ },
    ],
    [
      'an expression that does not compile',
      [
        { name: 'a', type: 'set', fields: {} },
        { name: 'b', type: 'http', url: 'https://x/{{ $string( }}' },
      ],
      { field: '/steps/1/url', message: /^expression does not compile: .* \(at position \d+\)$/ },
    ],
    [
      'an unclosed {{',
      [{ name: 'a', type: 'filter', condition: '{{ x' }],
      { field: '/steps/0/condition', message: /no closing/ },
    ],
    ['a missing field', [{ name: 'a', type: 'http' }], { field: '/steps/0/url', message: /is required/ }],
    [
      'a wrong method',
      [{ name: 'a', type: 'http', url: 'https://x', method: 'FETCH' }],
      { field: '/steps/0/method', message: /must/ },
    ],
  ])('refuses %s', (_name, steps, expected) => {
    const errors = validateSteps(steps as Step[]);
    expect(errors[0]?.field).toBe(expected.field);
    expect(errors[0]?.message).toMatch(expected.message);
  });
});
