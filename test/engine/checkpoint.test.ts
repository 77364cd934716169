/**
 * A waiting execution's checkpoint (engine/checkpoint.ts), run directly: parking again writes only
 * what changed (a `wait` inside a `forEach` writes O(n) bytes over all its parks, not O(n²)), the
 * run that resumes park after park ends as a run that never parked would, the execution's time
 * budget goes on across resumes (time parked aside), and what a checkpoint may hold is bounded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointJson } from '../../src/engine/checkpoint.js';
import { OPEN_NETWORK, Outbound } from '../../src/engine/network.js';
import { Engine, type RunResult } from '../../src/engine/run.js';
import { recordJson } from '../../src/model/record-json.js';
import type { Workflow } from '../../src/model/workflow.js';
import { workflowFactory } from './workflow-fixture.js';

const workflow = workflowFactory('checkpoint');
const ctx = { executionId: 'ex-checkpoint', mode: 'production' as const };

const engine = new Engine({ allowPrivateNetwork: true, executionTimeoutMs: 60_000 });
afterAll(() => engine.close());

/**
 * Runs `wf` on `item` to its end, resuming at once after every park as the queue would (the head
 * replaced, the part appended); returns the last result, the parks, and the bytes each wrote.
 */
async function runThrough(e: Engine, wf: Workflow, item: unknown) {
  const parts: { state: string; records: string }[] = [];
  const written: number[] = [];
  let result: RunResult = await e.run(wf, item, ctx);
  while (result.status === 'waiting') {
    const c = result.checkpoint!;
    parts.push(c.part);
    written.push(c.head.length + c.part.state.length + c.part.records.length);
    result = await e.run(wf, item, { ...ctx, resume: checkpointJson(c.head, parts) });
  }
  return { result, parks: written.length, bytes: written.reduce((a, b) => a + b, 0), written };
}

/** forEach over body.lines with a wait in each iteration, then a step after the loop. */
const waitInLoop = (seconds: number) =>
  workflow([
    { type: 'set', name: 'before', fields: { count: '{{ $count(body.lines) }}' } },
    {
      type: 'forEach',
      name: 'loop',
      items: '{{ $trigger.body.lines }}',
      steps: [
        { type: 'set', name: 'take', fields: { id: '{{ $item.id }}', text: '{{ $item.text }}' } },
        { type: 'wait', name: 'pause', seconds },
        {
          type: 'set',
          name: 'done',
          fields: { id: '{{ id }}', i: '{{ $index }}', n: '{{ $steps.before.count }}' },
        },
      ],
    },
    { type: 'set', name: 'after', fields: { ids: '{{ $.id }}', last: '{{ $steps.done.i }}' } },
  ]);

const lines = (count: number) => ({
  body: { lines: Array.from({ length: count }, (_, id) => ({ id, text: `${id}:${'x'.repeat(2_000)}` })) },
});

/**
 * Records as stored (top-level inputs left out: the checkpoint keeps none) without their times (a
 * resumed run and a straight one differ only in those).
 */
const timeless = (steps: RunResult['steps']) =>
  JSON.parse(recordJson(steps, 64 * 1024 * 1024)!, (k, v) =>
    k === 'startedAt' || k === 'finishedAt' ? undefined : v,
  );

describe('a wait inside a loop', () => {
  it('writes O(n) bytes over all its parks: 400 lines of 2 KB against 100', async () => {
    const small = await runThrough(engine, waitInLoop(60), lines(100));
    const big = await runThrough(engine, waitInLoop(60), lines(400));
    expect(small.parks).toBe(100);
    expect(big.parks).toBe(400);
    expect(big.result.status).toBe('succeeded');
    const ratio = big.bytes / small.bytes;
    console.info(
      `checkpoint bytes written: n=100 ${small.bytes}, n=400 ${big.bytes} (ratio ${ratio.toFixed(2)}); largest park ${Math.max(...big.written)}`,
    );
    // Quadratic would be ~16; the first park writes the 400 lines (800 KB) once.
    expect(ratio).toBeLessThan(5);
    // About the lines once, and a few KB a park: far from 400 × 800 KB.
    expect(big.bytes).toBeLessThan(6 * 1024 * 1024);
    // After the first park (the lines), every park writes about one iteration's worth.
    expect(Math.max(...big.written.slice(1))).toBeLessThan(16 * 1024);
  });

  it('ends as a run that never parked: the same output and records', async () => {
    const item = lines(7);
    const parked = await runThrough(engine, waitInLoop(60), item);
    const straight = await engine.run(waitInLoop(0), item, ctx);
    expect(parked.parks).toBe(7);
    expect(parked.result.output).toEqual(straight.output);
    expect(parked.result.output).toEqual({ ids: [0, 1, 2, 3, 4, 5, 6], last: 6 });
    expect(timeless(parked.result.steps)).toEqual(timeless(straight.steps));
  });

  it('resumes nested loops and branches park after park, with $item, $index and $steps back', async () => {
    const wf = (seconds: number) =>
      workflow([
        {
          type: 'forEach',
          name: 'outer',
          items: '{{ [1, 2, 3] }}',
          steps: [
            {
              type: 'if',
              name: 'odd',
              condition: '{{ $item % 2 = 1 }}',
              then: [
                {
                  type: 'forEach',
                  name: 'inner',
                  items: '{{ ["a", "b"] }}',
                  steps: [
                    { type: 'wait', name: 'w', seconds },
                    { type: 'set', name: 'pair', fields: { v: '{{ $item }}', i: '{{ $index }}' } },
                  ],
                },
              ],
              else: [{ type: 'set', name: 'even', fields: { v: '{{ $item * 10 }}' } }],
            },
            { type: 'set', name: 'tail', fields: { got: '{{ $ }}', outer: '{{ $item }}' } },
          ],
        },
      ]);
    const parked = await runThrough(engine, wf(60), {});
    const straight = await engine.run(wf(0), {}, ctx);
    expect(parked.parks).toBe(4);
    expect(parked.result.status).toBe('succeeded');
    expect(parked.result.output).toEqual(straight.output);
    expect(timeless(parked.result.steps)).toEqual(timeless(straight.steps));
  });
});

describe('the execution budget across resumes', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      setTimeout(() => res.end('{"ok":true}'), 600);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('counts the time used before each park; the time parked does not count', async () => {
    // 1 s in all: 600 ms before the wait, then 600 ms more after it is past the budget. Before,
    // each resume started the budget afresh and both halves fitted.
    const quick = new Engine({
      allowPrivateNetwork: true,
      executionTimeoutMs: 1_000,
      outbound: new Outbound(OPEN_NETWORK),
    });
    const wf = workflow([
      { type: 'http', name: 'one', url: `${base}/one` },
      { type: 'wait', name: 'pause', seconds: 60 },
      { type: 'http', name: 'two', url: `${base}/two` },
    ]);
    const first = await quick.run(wf, {}, ctx);
    expect(first.status).toBe('waiting');
    const elapsed = (JSON.parse(first.checkpoint!.head) as { elapsedMs: number }).elapsedMs;
    expect(elapsed).toBeGreaterThanOrEqual(590);
    // Parked a while: not counted.
    await new Promise((r) => setTimeout(r, 500));
    const started = Date.now();
    const second = await quick.run(
      wf,
      {},
      { ...ctx, resume: checkpointJson(first.checkpoint!.head, [first.checkpoint!.part]) },
    );
    expect(second.status).toBe('failed');
    expect(second.error).toMatchObject({ step: 'two', code: 'execution_timeout' });
    expect(second.error!.message).toMatch(/budget of 1000 ms/);
    // Stopped when the rest of the budget ran out, not a whole budget later.
    expect(Date.now() - started).toBeLessThan(590);

    // With room for both halves it goes through: what counts is time running, not time parked.
    const roomy = new Engine({
      allowPrivateNetwork: true,
      executionTimeoutMs: 2_000,
      outbound: new Outbound(OPEN_NETWORK),
    });
    const a = await roomy.run(wf, {}, ctx);
    await new Promise((r) => setTimeout(r, 1_000));
    const b = await roomy.run(
      wf,
      {},
      { ...ctx, resume: checkpointJson(a.checkpoint!.head, [a.checkpoint!.part]) },
    );
    expect(b.status).toBe('succeeded');
    await quick.close();
    await roomy.close();
  });
});

describe('bounds', () => {
  it('a run whose resumable state would pass 8 × the record limit fails at the wait, clearly', async () => {
    const small = new Engine({
      allowPrivateNetwork: false,
      executionTimeoutMs: 60_000,
      recordMaxBytes: 1024 * 1024,
    });
    // Each iteration's output holds the 200 KB field: 8 MiB of state after ~40 parks.
    const wf = workflow([
      {
        type: 'forEach',
        name: 'loop',
        items: '{{ $trigger.body.lines }}',
        steps: [
          {
            type: 'set',
            name: 'copy',
            fields: { customer: '{{ $trigger.body.customer }}', i: '{{ $index }}' },
          },
          { type: 'wait', name: 'pause', seconds: 60 },
        ],
      },
    ]);
    const item = { body: { customer: 'c'.repeat(200_000), lines: Array.from({ length: 200 }, (_, i) => i) } };
    const { result, parks, bytes } = await runThrough(small, wf, item);
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ step: 'pause', code: 'checkpoint_too_large' });
    expect(result.error!.message).toMatch(/HOOKFLOW_EXECUTION_RECORD_MAX_BYTES/);
    expect(parks).toBeLessThan(200);
    expect(bytes).toBeLessThan(12 * 1024 * 1024);
    const loop = result.steps[0]!;
    expect(loop.status).toBe('failed');
    expect(loop.iterations!.at(-1)!.status).toBe('failed');
    await small.close();
  });

  it('reads a checkpoint of the first format (one JSON value, no parts)', async () => {
    const wf = workflow([
      { type: 'set', name: 'a', fields: { v: 1 } },
      { type: 'wait', name: 'pause', seconds: 60 },
      { type: 'set', name: 'b', fields: { v: '{{ v + 1 }}', a: '{{ $steps.a.v }}' } },
    ]);
    const v1 = {
      v: 1,
      at: [{ i: 1, input: { v: 1 } }],
      state: null,
      steps: { a: { v: 1 } },
      records: [
        {
          name: 'a',
          type: 'set',
          status: 'succeeded',
          output: { v: 1 },
          error: null,
          startedAt: 'x',
          finishedAt: 'y',
        },
        {
          name: 'pause',
          type: 'wait',
          status: 'waiting',
          output: null,
          error: null,
          startedAt: 'x',
          finishedAt: 'y',
        },
      ],
    };
    const r = await engine.run(wf, {}, { ...ctx, resume: checkpointJson(JSON.stringify(v1), []) });
    expect(r.status).toBe('succeeded');
    expect(r.output).toEqual({ v: 2, a: 1 });
    expect(r.steps.map((s) => [s.name, s.status])).toEqual([
      ['a', 'succeeded'],
      ['pause', 'succeeded'],
      ['b', 'succeeded'],
    ]);
  });
});
