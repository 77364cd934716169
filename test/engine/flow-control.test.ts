/**
 * The engine's flow-control steps (SPEC 7b), run directly: if/switch/forEach/fail and their
 * records, nested lists, `wait` parking and resuming from a checkpoint that went through
 * JSON.stringify/parse (as the store keeps it), and runsBeforeCommit with nested steps.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { checkpointJson } from '../../src/engine/checkpoint.js';
import { OPEN_NETWORK, Outbound } from '../../src/engine/network.js';
import { Engine, type RunResult } from '../../src/engine/run.js';
import { validateSteps } from '../../src/engine/validate.js';
import type { Step } from '../../src/model/workflow.js';
import { workflowFactory } from './workflow-fixture.js';

const engine = new Engine({
  allowPrivateNetwork: true,
  executionTimeoutMs: 10_000,
  outbound: new Outbound(OPEN_NETWORK),
  foreachMaxItems: 5,
});
afterAll(() => engine.close());

const workflow = workflowFactory('flow');
const ctx = { executionId: 'ex-1', mode: 'production' as const };
const run = (steps: Record<string, unknown>[], item: unknown = {}) => engine.run(workflow(steps), item, ctx);
/**
 * What the store keeps of one execution's parks: the last head and every part so far; each call
 * adds a waiting result's and returns the checkpoint to resume from (RunContext.resume).
 */
const keeper = () => {
  const parts: { state: string; records: string }[] = [];
  return (r: RunResult): string => {
    parts.push(r.checkpoint!.part);
    return checkpointJson(r.checkpoint!.head, parts);
  };
};
const stored = (r: RunResult) => keeper()(r);

describe('if', () => {
  const steps = [
    {
      type: 'if',
      name: 'big',
      condition: '{{ body.amount > 100 }}',
      then: [{ type: 'set', name: 'tag', fields: { size: 'big', amount: '{{ body.amount }}' } }],
      else: [{ type: 'set', name: 'small', fields: { size: 'small' } }],
    },
    { type: 'set', name: 'after', fields: { got: '{{ size }}', fromSteps: '{{ $steps.big.size }}' } },
  ];

  it('runs then, records the branch and the nested records, outputs the last nested output', async () => {
    const r = await run(steps, { body: { amount: 500 } });
    expect(r.status).toBe('succeeded');
    expect(r.output).toEqual({ got: 'big', fromSteps: 'big' });
    const rec = r.steps[0]!;
    expect(rec).toMatchObject({ name: 'big', type: 'if', status: 'succeeded', branch: 'then' });
    expect(rec.output).toEqual({ size: 'big', amount: 500 });
    expect(rec.steps).toHaveLength(1);
    expect(rec.steps![0]).toMatchObject({
      name: 'tag',
      status: 'succeeded',
      output: { size: 'big', amount: 500 },
    });
  });

  it('runs else when false', async () => {
    const r = await run(steps, { body: { amount: 5 } });
    expect(r.steps[0]).toMatchObject({ branch: 'else', output: { size: 'small' } });
    expect(r.output).toEqual({ got: 'small', fromSteps: 'small' });
  });

  it('without else, or with an empty branch, outputs its input', async () => {
    const r = await run(
      [{ type: 'if', name: 'x', condition: '{{ false }}', then: [{ type: 'set', name: 'y', fields: {} }] }],
      {
        a: 1,
      },
    );
    expect(r.status).toBe('succeeded');
    expect(r.steps[0]).toMatchObject({ branch: 'else', steps: [], output: { a: 1 } });
    const empty = await run([{ type: 'if', name: 'x', condition: '{{ true }}', then: [] }], { a: 2 });
    expect(empty.steps[0]).toMatchObject({ branch: 'then', steps: [], output: { a: 2 } });
  });

  it('a condition that is not a boolean fails the step, naming the field', async () => {
    const r = await run([{ type: 'if', name: 'x', condition: '{{ "yes" }}', then: [] }]);
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ step: 'x', field: '/condition' });
  });

  it('a filter inside a top-level branch ends the run filtered', async () => {
    const r = await run([
      {
        type: 'if',
        name: 'x',
        condition: '{{ true }}',
        then: [{ type: 'filter', name: 'f', condition: '{{ false }}' }],
      },
      { type: 'set', name: 'never', fields: {} },
    ]);
    expect(r.status).toBe('filtered');
    expect(r.steps).toHaveLength(1);
    expect(r.steps[0]).toMatchObject({ status: 'filtered', steps: [{ name: 'f', status: 'filtered' }] });
  });
});

describe('switch', () => {
  const steps = [
    {
      type: 'switch',
      name: 'route',
      value: '{{ headers."x-github-event" }}',
      cases: [
        { equals: 'push', steps: [{ type: 'set', name: 'push', fields: { kind: 'push' } }] },
        { equals: { a: [1, 2] }, steps: [{ type: 'set', name: 'obj', fields: { kind: 'object' } }] },
        {
          when: '{{ $contains(headers."x-github-event", "issue") }}',
          steps: [{ type: 'set', name: 'issue', fields: { kind: 'issue' } }],
        },
      ],
      default: [{ type: 'set', name: 'other', fields: { kind: 'other' } }],
    },
  ];
  const event = (e: unknown) => ({ headers: { 'x-github-event': e } });

  it('runs the first case whose equals matches (JSON equality), recording its index', async () => {
    const r = await run(steps, event('push'));
    expect(r.steps[0]).toMatchObject({ branch: 0, output: { kind: 'push' } });
    const o = await run(steps, event({ a: [1, 2] }));
    expect(o.steps[0]).toMatchObject({ branch: 1, output: { kind: 'object' } });
  });

  it('a `when` case, and the default', async () => {
    expect((await run(steps, event('issues'))).steps[0]).toMatchObject({
      branch: 2,
      output: { kind: 'issue' },
    });
    expect((await run(steps, event('star'))).steps[0]).toMatchObject({
      branch: 'default',
      output: { kind: 'other' },
    });
  });

  it('no match and no default: outputs its input, no branch', async () => {
    const r = await run(
      [{ type: 'switch', name: 's', value: '{{ 3 }}', cases: [{ equals: '3', steps: [] }] }],
      { a: 1 },
    );
    expect(r.status).toBe('succeeded');
    expect(r.output).toEqual({ a: 1 });
    expect(r.steps[0]!.branch).toBeUndefined();
  });
});

describe('forEach', () => {
  it('runs per element with $item, $index and $ = the element; outputs the array of last outputs', async () => {
    const r = await run(
      [
        {
          type: 'forEach',
          name: 'lines',
          items: '{{ body.lines }}',
          steps: [
            {
              type: 'set',
              name: 'line',
              fields: { sku: '{{ sku }}', i: '{{ $index }}', same: '{{ $item.sku = sku }}' },
            },
            { type: 'filter', name: 'keep', condition: '{{ sku != "skip" }}' },
          ],
        },
      ],
      { body: { lines: [{ sku: 'a' }, { sku: 'skip' }, { sku: 'c' }] } },
    );
    expect(r.status).toBe('succeeded');
    expect(r.output).toEqual([
      { sku: 'a', i: 0, same: true },
      { sku: 'c', i: 2, same: true },
    ]);
    const rec = r.steps[0]!;
    expect(rec.iterationCount).toBe(3);
    expect(rec.iterations!.map((i) => [i.index, i.status])).toEqual([
      [0, 'succeeded'],
      [1, 'filtered'],
      [2, 'succeeded'],
    ]);
    expect(rec.iterations![1]!.steps.map((s) => s.name)).toEqual(['line', 'keep']);
  });

  it('a filter in a branch inside a loop drops the element', async () => {
    const r = await run([
      {
        type: 'forEach',
        name: 'loop',
        items: '{{ [1, 2, 3] }}',
        steps: [
          {
            type: 'if',
            name: 'odd',
            condition: '{{ $item % 2 = 0 }}',
            then: [{ type: 'filter', name: 'no', condition: '{{ false }}' }],
          },
        ],
      },
    ]);
    expect(r.status).toBe('succeeded');
    expect(r.output).toEqual([1, 3]);
  });

  it('nested loops: the inner $item shadows the outer one, which is back after the inner loop', async () => {
    const r = await run([
      {
        type: 'forEach',
        name: 'outer',
        items: '{{ [[1, 2], [3]] }}',
        steps: [
          {
            type: 'forEach',
            name: 'inner',
            items: '{{ $item }}',
            steps: [{ type: 'set', name: 'x', fields: { v: '{{ $item * 10 }}', at: '{{ $index }}' } }],
          },
          {
            type: 'set',
            name: 'after',
            fields: { outer: '{{ $item }}', outerIndex: '{{ $index }}', inner: '{{ $ }}' },
          },
        ],
      },
    ]);
    expect(r.status).toBe('succeeded');
    expect(r.output).toEqual([
      {
        outer: [1, 2],
        outerIndex: 0,
        inner: [
          { v: 10, at: 0 },
          { v: 20, at: 1 },
        ],
      },
      { outer: [3], outerIndex: 1, inner: [{ v: 30, at: 0 }] },
    ]);
  });

  it('items that are not an array fail the step; more than the limit too', async () => {
    const r = await run([{ type: 'forEach', name: 'l', items: '{{ body }}', steps: [] }], { body: { a: 1 } });
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ step: 'l', field: '/items' });
    expect(r.error!.message).toMatch(/must be an array/);
    const big = await run([{ type: 'forEach', name: 'l', items: '{{ [1..6] }}', steps: [] }]);
    expect(big.error!.message).toMatch(/at most 5 \(HOOKFLOW_FOREACH_MAX_ITEMS\)/);
  });

  it('a failing iteration fails the loop and the execution, naming the inner step', async () => {
    const r = await run([
      {
        type: 'forEach',
        name: 'l',
        items: '{{ [1, 2] }}',
        steps: [{ type: 'fail', name: 'boom', message: 'bad {{ $item }}' }],
      },
    ]);
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ step: 'boom', message: 'bad 1' });
    expect(r.steps[0]).toMatchObject({
      status: 'failed',
      iterationCount: 1,
      iterations: [{ index: 0, status: 'failed' }],
    });
  });

  it('keeps the first 100 iterations in full and counts them all', async () => {
    const big = new Engine({ allowPrivateNetwork: false, executionTimeoutMs: 10_000 });
    const r = await big.run(
      workflow([{ type: 'forEach', name: 'l', items: '{{ [1..150] }}', steps: [] }]),
      {},
      ctx,
    );
    expect(r.steps[0]!.iterationCount).toBe(150);
    expect(r.steps[0]!.iterations).toHaveLength(100);
    expect((r.output as unknown[]).length).toBe(150);
    await big.close();
  });
});

describe('fail', () => {
  it('fails the execution with its message', async () => {
    const r = await run([{ type: 'fail', name: 'stop', message: 'No customer {{ body.id }}' }], {
      body: { id: 7 },
    });
    expect(r.status).toBe('failed');
    expect(r.error).toEqual({ step: 'stop', message: 'No customer 7' });
  });
});

describe('wait', () => {
  it('parks a top-level wait: status waiting, resumeAt, a JSON checkpoint without the trigger item', async () => {
    const item = { body: { secretPayload: 'x'.repeat(1000) } };
    const steps = [
      { type: 'set', name: 'a', fields: { v: 1 } },
      { type: 'wait', name: 'pause', seconds: 60 },
      { type: 'set', name: 'b', fields: { v: '{{ v + 1 }}', a: '{{ $steps.a.v }}' } },
    ];
    const wf = workflow(steps);
    const before = Date.now();
    const first = await engine.run(wf, item, ctx);
    expect(first.status).toBe('waiting');
    expect(Date.parse(first.resumeAt!)).toBeGreaterThanOrEqual(before + 59_000);
    expect(first.resumeAt).toMatch(/Z$/);
    expect(first.steps.map((s) => [s.name, s.status])).toEqual([
      ['a', 'succeeded'],
      ['pause', 'waiting'],
    ]);
    const checkpoint = stored(first);
    expect(JSON.stringify(checkpoint)).not.toContain('secretPayload');

    const second = await engine.run(wf, item, { ...ctx, resume: checkpoint });
    expect(second.status).toBe('succeeded');
    expect(second.output).toEqual({ v: 2, a: 1 });
    expect(second.steps.map((s) => [s.name, s.status])).toEqual([
      ['a', 'succeeded'],
      ['pause', 'succeeded'],
      ['b', 'succeeded'],
    ]);
    expect(second.steps[1]!.output).toEqual({ v: 1 });
    expect(second.steps[1]!.startedAt).toBe(first.steps[1]!.startedAt);
  });

  it('a wait as the first step (input = the trigger item) resumes with the item', async () => {
    const wf = workflow([
      { type: 'wait', name: 'w', seconds: 5 },
      { type: 'set', name: 'b', fields: { got: '{{ body.x }}' } },
    ]);
    const first = await engine.run(wf, { body: { x: 'hi' } }, ctx);
    expect(first.status).toBe('waiting');
    expect(JSON.stringify(first.checkpoint)).not.toContain('hi');
    const second = await engine.run(wf, { body: { x: 'hi' } }, { ...ctx, resume: stored(first) });
    expect(second.output).toEqual({ got: 'hi' });
  });

  it('resumes inside if inside forEach: the iteration, branch, outputs so far and $item come back', async () => {
    const wf = workflow([
      {
        type: 'forEach',
        name: 'loop',
        items: '{{ [1, 2, 3] }}',
        steps: [
          {
            type: 'if',
            name: 'two',
            condition: '{{ $item = 2 }}',
            then: [
              { type: 'set', name: 'before', fields: { v: '{{ $item }}' } },
              { type: 'wait', name: 'w', seconds: 30 },
              {
                type: 'set',
                name: 'afterWait',
                fields: { v: '{{ $item * 100 }}', i: '{{ $index }}', b: '{{ $steps.before.v }}' },
              },
            ],
            else: [{ type: 'set', name: 'plain', fields: { v: '{{ $item }}' } }],
          },
        ],
      },
      { type: 'set', name: 'end', fields: { all: '{{ $ }}' } },
    ]);
    const first = await engine.run(wf, {}, ctx);
    expect(first.status).toBe('waiting');
    const loop = first.steps[0]!;
    expect(loop.status).toBe('waiting');
    expect(loop.iterations!.map((i) => i.status)).toEqual(['succeeded', 'waiting']);
    expect(loop.iterations![1]!.steps[0]).toMatchObject({ name: 'two', status: 'waiting', branch: 'then' });

    const second = await engine.run(wf, {}, { ...ctx, resume: stored(first) });
    expect(second.status).toBe('succeeded');
    expect(second.output).toEqual({ all: [{ v: 1 }, { v: 200, i: 1, b: 2 }, { v: 3 }] });
    const done = second.steps[0]!;
    expect(done.iterationCount).toBe(3);
    expect(done.iterations!.map((i) => i.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(done.iterations![1]!.steps[0]!.steps!.map((s) => [s.name, s.status])).toEqual([
      ['before', 'succeeded'],
      ['w', 'succeeded'],
      ['afterWait', 'succeeded'],
    ]);
  });

  it('a second wait parks again; seconds 0 and a time in the past do not wait; beyond 30 days fails', async () => {
    const wf = workflow([
      { type: 'wait', name: 'w1', seconds: 10 },
      { type: 'wait', name: 'w2', until: '{{ $fromMillis($millis() + 3600000) }}' },
      { type: 'set', name: 'done', fields: { ok: true } },
    ]);
    const one = await engine.run(wf, {}, ctx);
    const keep = keeper();
    const two = await engine.run(wf, {}, { ...ctx, resume: keep(one) });
    expect(two.status).toBe('waiting');
    expect(two.steps.map((s) => s.status)).toEqual(['succeeded', 'waiting']);
    expect(Date.parse(two.resumeAt!)).toBeGreaterThan(Date.parse(one.resumeAt!));
    const three = await engine.run(wf, {}, { ...ctx, resume: keep(two) });
    expect(three.status).toBe('succeeded');
    expect(three.steps.map((s) => s.name)).toEqual(['w1', 'w2', 'done']);

    const now = await run([
      { type: 'wait', name: 'zero', seconds: 0 },
      { type: 'wait', name: 'past', until: '2020-01-01T00:00:00Z' },
    ]);
    expect(now.status).toBe('succeeded');
    const far = await run([{ type: 'wait', name: 'far', seconds: 31 * 86_400 }]);
    expect(far.status).toBe('failed');
    const farUntil = await run([
      { type: 'wait', name: 'far', until: '{{ $fromMillis($millis() + 31 * 86400000) }}' },
    ]);
    expect(farUntil.error!.message).toMatch(/at most 30 days/);
  });

  it('an unreadable checkpoint fails the run instead of starting over', async () => {
    const r = await engine.run(
      workflow([{ type: 'set', name: 'a', fields: {} }]),
      {},
      { ...ctx, resume: '{"head":{"v":99},"parts":[]}' },
    );
    expect(r.status).toBe('failed');
    expect(r.steps).toEqual([]);
  });
});

/** A workflow with `step` inside a forEach inside a switch case. */
const nested = (step: Record<string, unknown>) =>
  workflow([
    {
      type: 'switch',
      name: 's',
      value: '{{ 1 }}',
      cases: [{ equals: 1, steps: [{ type: 'forEach', name: 'l', items: '{{ [] }}', steps: [step] }] }],
    },
  ]);

describe('runsBeforeCommit with nested steps', () => {
  it('is false for code, wait or http nested anywhere, true for nested pure steps', () => {
    expect(engine.runsBeforeCommit(nested({ type: 'set', name: 'x', fields: {} }))).toBe(true);
    expect(engine.runsBeforeCommit(nested({ type: 'wait', name: 'x', seconds: 1 }))).toBe(false);
    expect(engine.runsBeforeCommit(nested({ type: 'code', name: 'x', source: 'return 1' }))).toBe(false);
    expect(engine.runsBeforeCommit(nested({ type: 'http', name: 'x', url: 'http://127.0.0.1/' }))).toBe(
      false,
    );
    expect(
      engine.runsBeforeCommit(nested({ type: 'set', name: 'x', fields: { a: '{{ $match("a", /a/) }}' } })),
    ).toBe(false);
  });
});

describe('runsWithoutEffects with nested steps', () => {
  it('is true for pure and code steps or slow expressions nested anywhere, false for wait or http', () => {
    expect(engine.runsWithoutEffects(nested({ type: 'set', name: 'x', fields: {} }))).toBe(true);
    expect(engine.runsWithoutEffects(nested({ type: 'code', name: 'x', source: 'return 1' }))).toBe(true);
    expect(
      engine.runsWithoutEffects(nested({ type: 'set', name: 'x', fields: { a: '{{ $match("a", /a/) }}' } })),
    ).toBe(true);
    expect(engine.runsWithoutEffects(nested({ type: 'wait', name: 'x', seconds: 1 }))).toBe(false);
    expect(engine.runsWithoutEffects(nested({ type: 'http', name: 'x', url: 'http://127.0.0.1/' }))).toBe(
      false,
    );
  });
});

describe('validateSteps with nested steps', () => {
  const v = (steps: unknown[]) => validateSteps(steps as Step[]);

  it('names the nested JSON pointer', () => {
    const errors = v([
      {
        type: 'switch',
        name: 's',
        value: 'x',
        cases: [
          { equals: 1, steps: [] },
          { when: '{{ true }}', steps: [{ type: 'if', name: 'i', condition: '{{ (', then: [] }] },
        ],
      },
    ]);
    expect(errors[0]).toMatchObject({ field: '/steps/0/cases/1/steps/0/condition' });
  });

  it('names are unique across nesting', () => {
    const errors = v([
      { type: 'set', name: 'a', fields: {} },
      { type: 'forEach', name: 'l', items: '{{ [] }}', steps: [{ type: 'set', name: 'a', fields: {} }] },
    ]);
    expect(errors).toEqual([
      { field: '/steps/1/steps/0/name', message: expect.stringMatching(/duplicate step name "a"/) },
    ]);
  });

  it('refuses nesting deeper than 10 levels, accepts 10', () => {
    const deep = (levels: number): unknown[] => {
      let steps: unknown[] = [{ type: 'set', name: 'leaf', fields: {} }];
      for (let i = levels - 1; i >= 1; i--)
        steps = [{ type: 'forEach', name: `l${i}`, items: '{{ [] }}', steps }];
      return steps;
    };
    expect(v(deep(10))).toEqual([]);
    const errors = v(deep(11));
    expect(errors).toHaveLength(1);
    expect(errors[0]!.field).toBe(`/steps/0${'/steps/0'.repeat(9)}/steps`);
    expect(errors[0]!.message).toMatch(/more than 10 levels/);
  });

  it('checks nested steps: unknown fields, missing names, case shapes, wait fields', () => {
    expect(v([{ type: 'if', name: 'i', condition: '{{ true }}', then: [{ type: 'set' }] }])[0]).toMatchObject(
      {
        field: '/steps/0/then/0/name',
      },
    );
    expect(v([{ type: 'switch', name: 's', value: 1, cases: [{ steps: [] }] }])[0]).toMatchObject({
      field: '/steps/0/cases/0',
    });
    expect(v([{ type: 'wait', name: 'w' }])[0]).toMatchObject({ field: '/steps/0/seconds' });
    expect(v([{ type: 'wait', name: 'w', until: 'tomorrow' }])[0]).toMatchObject({ field: '/steps/0/until' });
    expect(v([{ type: 'forEach', name: 'l', items: '{{ x }}', steps: [], extra: 1 }])[0]).toMatchObject({
      field: '/steps/0/extra',
    });
  });
});
