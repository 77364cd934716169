import { describe, expect, it } from 'vitest';
import { compileTemplate, renderTemplate } from '../../src/engine/expressions.js';
import { respondStep } from '../../src/engine/steps/respond.js';
import { simulate } from '../../web/src/lib/simulate.js';
import type { Execution, ExecutionStep, Step } from '../../web/src/types.js';

const item = { body: { param1: 'a', param2: 'b', n: 2 }, query: {}, headers: { 'x-id': '7' } };

function execution(steps: Partial<ExecutionStep>[]): Execution {
  return {
    id: 'exec-1',
    workflowId: 'wf-1',
    workflowVersion: 1,
    mode: 'test',
    status: 'succeeded',
    trigger: item,
    steps: steps.map((s) => ({
      name: 'step',
      type: 'http',
      status: 'succeeded',
      output: null,
      error: null,
      startedAt: '2024-01-01T00:00:00.000Z',
      finishedAt: '2024-01-01T00:00:01.000Z',
      ...s,
    })),
    error: null,
    attempt: 1,
    retryOf: null,
    createdAt: '2024-01-01T00:00:00.000Z',
    startedAt: '2024-01-01T00:00:00.000Z',
    finishedAt: '2024-01-01T00:00:01.000Z',
  };
}

const run = (steps: Step[], recorded?: Execution) => simulate(steps, item, recorded, 'wf-1');

describe('simulate', () => {
  it('gives nothing for no steps', async () => {
    expect(await run([])).toEqual({ scopes: [], results: [], byPath: {} });
  });

  it('shows each step the input, the trigger item, earlier outputs and a preview execution', async () => {
    const steps: Step[] = [
      { name: 'first', type: 'set', fields: { a: '{{ body.param1 }}' } },
      { name: 'second', type: 'set', fields: { b: '{{ $steps.first.a }}{{ $trigger.body.param2 }}' } },
      { name: 'third', type: 'set', fields: { c: '{{ b }}' } },
    ];
    const sim = await run(steps);
    const execution = { id: 'preview', mode: 'test', workflowId: 'wf-1', attempt: 1 };
    expect(sim.scopes).toEqual([
      { input: item, trigger: item, steps: {}, execution, vars: {} },
      { input: { a: 'a' }, trigger: item, steps: { first: { a: 'a' } }, execution, vars: {} },
      {
        input: { b: 'ab' },
        trigger: item,
        steps: { first: { a: 'a' }, second: { b: 'ab' } },
        execution,
        vars: {},
      },
    ]);
    expect(sim.results).toEqual([{ output: { a: 'a' } }, { output: { b: 'ab' } }, { output: { c: 'ab' } }]);
  });

  it('gives the steps $vars, and no $secrets (a set step may not use them)', async () => {
    const sim = await simulate(
      [
        {
          name: 'url',
          type: 'set',
          fields: { url: '{{ $vars.API_URL }}/{{ body.n }}', s: '{{ $secrets.K }}' },
        },
      ],
      item,
      undefined,
      'wf-1',
      { API_URL: 'https://api.example.com' },
    );
    expect(sim.results).toEqual([{ output: { url: 'https://api.example.com/2', s: null } }]);
  });

  it('does not change the steps a scope saw when later steps run', async () => {
    const sim = await run([
      { name: 'one', type: 'set', fields: { x: 1 } },
      { name: 'two', type: 'set', fields: { y: 2 } },
    ]);
    expect(Object.keys(sim.scopes[0]!.steps)).toEqual([]);
    expect(Object.keys(sim.scopes[1]!.steps)).toEqual(['one']);
  });

  it('keeps a step named __proto__ as a plain output', async () => {
    const sim = await run([
      { name: '__proto__', type: 'set', fields: { x: 1 } },
      { name: 'next', type: 'set', fields: { y: '{{ $lookup($steps, "__proto__").x }}' } },
    ]);
    expect(Object.getPrototypeOf(sim.scopes[1]!.steps)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(sim.scopes[1]!.steps, '__proto__')?.value).toEqual({ x: 1 });
    expect(sim.results[1]).toEqual({ output: { y: 1 } });
  });

  describe('set', () => {
    it('nests dotted field names and keeps the types of lone expressions', async () => {
      const sim = await run([
        {
          name: 's',
          type: 'set',
          fields: {
            'customer.name': '{{ body.param1 }}',
            'customer.n': '{{ body.n }}',
            total: '{{ body.n * 2 }}',
          },
        },
      ]);
      expect(sim.results[0]).toEqual({ output: { customer: { name: 'a', n: 2 }, total: 4 } });
    });

    it('lists a field whose expression finds nothing as null', async () => {
      const sim = await run([{ name: 's', type: 'set', fields: { missing: '{{ body.nope }}' } }]);
      expect(sim.results[0]).toEqual({ output: { missing: null } });
    });

    it('merges into a copy of the input with keepInput, leaving the input itself unchanged', async () => {
      const sim = await run([
        { name: 'a', type: 'set', fields: { 'o.x': 1, 'o.y': 2 } },
        { name: 'b', type: 'set', keepInput: true, fields: { 'o.y': 3, 'o.z': 4, w: 5 } },
      ]);
      expect(sim.results[1]).toEqual({ output: { o: { x: 1, y: 3, z: 4 }, w: 5 } });
      expect(sim.results[0]).toEqual({ output: { o: { x: 1, y: 2 } } });
    });

    it('takes keepInput from an expression, and only when it gives true', async () => {
      const on = await run([{ name: 's', type: 'set', keepInput: '{{ body.n = 2 }}', fields: { x: 1 } }]);
      expect(on.results[0]).toEqual({ output: { ...item, x: 1 } });
      const truthy = await run([{ name: 's', type: 'set', keepInput: 'yes', fields: { x: 1 } }]);
      expect(truthy.results[0]).toEqual({ output: { x: 1 } });
    });

    it('starts from an empty object when the input is not an object', async () => {
      const sim = await simulate(
        [{ name: 's', type: 'set', keepInput: true, fields: { x: 1 } }],
        [1, 2],
        undefined,
        'w',
      );
      expect(sim.results[0]).toEqual({ output: { x: 1 } });
    });

    it('replaces a value that is not an object when a dotted name goes through it', async () => {
      const sim = await run([
        { name: 's', type: 'set', fields: { a: 1, 'a.b': 2, 'l.c': 3 }, keepInput: false },
      ]);
      expect(sim.results[0]).toEqual({ output: { a: { b: 2 }, l: { c: 3 } } });
    });

    it('skips names with empty parts or reserved names, which the server refuses', async () => {
      const sim = await run([
        {
          name: 's',
          type: 'set',
          fields: {
            ok: 1,
            'a..b': 2,
            '.x': 3,
            'y.': 4,
            '__proto__.polluted': 5,
            'c.constructor': 6,
            prototype: 7,
          },
        },
      ]);
      const output = sim.results[0]!.output as Record<string, unknown>;
      expect(output).toEqual({ ok: 1 });
      expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('gives an empty object when there are no fields', async () => {
      const sim = await run([{ name: 's', type: 'set' }]);
      expect(sim.results[0]).toEqual({ output: {} });
    });
  });

  describe('filter', () => {
    it('passes the input on when the condition is true', async () => {
      const sim = await run([
        { name: 'f', type: 'filter', condition: '{{ body.param1 = "a" }}' },
        { name: 'after', type: 'set', keepInput: true, fields: { seen: true } },
      ]);
      expect(sim.results[0]).toEqual({ output: item, note: 'The condition is true: the run goes on.' });
      expect(sim.scopes[1]!.input).toEqual(item);
    });

    it('says the run would stop when the condition is false or finds nothing', async () => {
      const stop = {
        output: null,
        note: 'The condition is false: the run would stop here (status filtered).',
        stopped: 'filtered',
      };
      for (const condition of ['{{ body.param1 = "z" }}', '{{ body.nope }}', '{{ null }}', false]) {
        const sim = await run([{ name: 'f', type: 'filter', condition }]);
        expect(sim.results[0]).toEqual(stop);
      }
      const sim = await run([{ name: 'f', type: 'filter' }]);
      expect(sim.results[0]).toEqual(stop);
    });

    it('reports a condition that is neither true nor false', async () => {
      const sim = await run([{ name: 'f', type: 'filter', condition: '{{ body.param1 }}' }]);
      expect(sim.results[0]).toEqual({
        output: null,
        error: 'The condition must be true or false, but it gave "a".',
      });
      const text = await run([{ name: 'f', type: 'filter', condition: 'true' }]);
      expect(text.results[0]?.error).toBe('The condition must be true or false, but it gave "true".');
    });
  });

  describe('respond', () => {
    it('answers 200 with the input when nothing is set', async () => {
      const sim = await run([{ name: 'r', type: 'respond' }]);
      expect(sim.results[0]).toEqual({ output: { status: 200, headers: {}, body: item } });
    });

    it('renders status, headers and body', async () => {
      const sim = await run([
        {
          name: 'r',
          type: 'respond',
          status: '{{ 200 + body.n }}',
          headers: { 'x-echo': '{{ headers.`x-id` }}' },
          body: { got: '{{ body.param1 }}', list: ['{{ body.n }}'] },
        },
      ]);
      expect(sim.results[0]).toEqual({
        output: { status: 202, headers: { 'x-echo': '7' }, body: { got: 'a', list: [2] } },
      });
    });

    it('sends an explicit body even when it is null or empty', async () => {
      const sim = await run([{ name: 'r', type: 'respond', body: null }]);
      expect(sim.results[0]).toEqual({ output: { status: 200, headers: {}, body: null } });
      const empty = await run([{ name: 'r', type: 'respond', body: '' }]);
      expect(empty.results[0]).toEqual({ output: { status: 200, headers: {}, body: '' } });
    });
  });

  describe('respond, as the engine answers', () => {
    const headers = {
      'X-Upper': 'a',
      'x-num': '{{ 42 }}',
      'x-obj': '{{ {"a": [1]} }}',
      'x-bool': true,
      'x-null': null,
      'x-none': '{{ nothing }}',
      'Content-Length': '5',
      'transfer-encoding': 'chunked',
    };

    it('lowercases header names, sends other values as JSON, drops null and framing headers', async () => {
      const sim = await run([{ name: 'r', type: 'respond', headers }]);
      expect(sim.results[0]).toEqual({
        output: {
          status: 200,
          headers: { 'x-upper': 'a', 'x-num': '42', 'x-obj': '{"a":[1]}', 'x-bool': 'true' },
          body: item,
        },
      });
    });

    it('gives null, not undefined, for a body expression that finds nothing', async () => {
      const sim = await run([{ name: 'r', type: 'respond', body: '{{ nothing }}' }]);
      expect(sim.results[0]?.output).toHaveProperty('body', null);
    });

    it('fails on a header value with a line break', async () => {
      const sim = await run([
        { name: 'r', type: 'respond', headers: { 'X-Bad': '{{ "a" & $string("\\n") }}' } },
      ]);
      expect(sim.results[0]).toEqual({
        output: null,
        error:
          'The value of header "X-Bad" contains a line break (U+000A at position 1); header values are sent ' +
          'as ASCII text without control characters: encode other text with $encodeUrlComponent() or $base64encode().',
      });
    });

    // The engine itself (render, then the respond step) is the reference for the preview.
    it.each([
      { headers },
      { headers: { 'X-A': '1', 'x-a': '2', Te: 'x', 'x-list': ['{{ body.n }}', 'b'] } },
      { status: '{{ 200 + body.n }}', body: '{{ nothing }}' },
      { body: { got: '{{ body.param1 }}' } },
      {},
    ])('gives what the engine gives for %j', async (config) => {
      const sim = await run([{ name: 'r', type: 'respond', ...config }]);
      const rendered = await renderTemplate(compileTemplate(config).template, {
        input: item,
        trigger: item,
        steps: {},
        execution: { id: 'preview', mode: 'test', workflowId: 'wf-1', attempt: 1 },
      });
      const engine = await respondStep.run(rendered as Parameters<typeof respondStep.run>[0], {
        input: item,
        signal: new AbortController().signal,
        outbound: undefined as never,
      });
      expect(sim.results[0]).toEqual({ output: engine.output });
    });
  });

  describe('http', () => {
    it('has no output and says so when there is no test run', async () => {
      const sim = await run([{ name: 'call', type: 'http', url: 'https://x.example' }]);
      expect(sim.results[0]).toEqual({
        output: null,
        note: 'HTTP requests are sent only by the server: run a test event to see this output.',
      });
    });

    it('takes the output of the same step (by name and type) from the last test run', async () => {
      const recorded = execution([
        { name: 'call', type: 'set', output: 'wrong type' },
        { name: 'other', type: 'http', output: 'wrong name' },
        { name: 'call', type: 'http', output: { status: 201, body: { id: 9 } } },
      ]);
      const sim = await run(
        [
          { name: 'call', type: 'http', url: 'https://x.example' },
          { name: 'use', type: 'set', fields: { id: '{{ body.id }}', via: '{{ $steps.call.status }}' } },
        ],
        recorded,
      );
      expect(sim.results[0]).toEqual({
        output: { status: 201, body: { id: 9 } },
        note: 'From the last test run: HTTP requests are sent only by the server.',
      });
      expect(sim.results[1]).toEqual({ output: { id: 9, via: 201 } });
    });
  });

  describe('other step types', () => {
    it('are not previewed: the recorded output when there is one, else null', async () => {
      const note = 'This step type is not previewed in the browser.';
      const without = await run([{ name: 'x', type: 'sendEmail', source: '{{ ( }}' }]);
      expect(without.results[0]).toEqual({ output: null, note });
      const recorded = execution([{ name: 'x', type: 'sendEmail', output: { done: true } }]);
      const withRun = await run([{ name: 'x', type: 'sendEmail' }], recorded);
      expect(withRun.results[0]).toEqual({ output: { done: true }, note });
    });
  });

  it('reports an expression error of a step and goes on with a null input', async () => {
    const sim = await run([
      { name: 'bad', type: 'set', fields: { a: '{{ ( }}' } },
      { name: 'next', type: 'set', keepInput: true, fields: { b: 1 } },
    ]);
    expect(sim.results[0]).toEqual({
      output: null,
      error: 'Expected ")" before end of expression. (at position 3)',
    });
    expect(sim.scopes[1]!.input).toBeNull();
    expect(sim.scopes[1]!.steps).toEqual({ bad: null });
    expect(sim.results[1]).toEqual({ output: { b: 1 } });
  });

  it('reports an evaluation error', async () => {
    const sim = await run([{ name: 'r', type: 'respond', body: '{{ $error("nope") }}' }]);
    expect(sim.results[0]?.output).toBeNull();
    expect(sim.results[0]?.error).toMatch(/^nope\. \(at position \d+\)$/);
  });
});
