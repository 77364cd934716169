/**
 * The editor's dry run (web/src/lib/simulate.ts) against the engine, on the same steps and item:
 * every step the engine records has the same status, output and branch in the preview (inside a
 * forEach, the first element's, which is what the preview shows). `code` does not run in the
 * browser: the preview takes its output from the last test run, so the engine's run is handed to
 * the dry run as the editor hands it a test run. Deliberate differences, not compared: the preview
 * goes on past a step that stops the run (so later steps can be edited with a scope), and it
 * previews the branches not taken.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { OPEN_NETWORK, Outbound } from '../../src/engine/network.js';
import { Engine, type RunResult } from '../../src/engine/run.js';
import { simulate } from '../../web/src/lib/simulate.js';
import { walkSteps } from '../../web/src/lib/stepTree.js';
import type { Execution, ExecutionStep, Step } from '../../web/src/types.js';
import { workflowFactory } from '../engine/workflow-fixture.js';

const engine = new Engine({
  allowPrivateNetwork: true,
  executionTimeoutMs: 10_000,
  outbound: new Outbound(OPEN_NETWORK),
  foreachMaxItems: 100,
});
afterAll(() => engine.close());
const workflow = workflowFactory('parity');

interface Row {
  at: string;
  name: string;
  status: string;
  output: unknown;
  branch?: unknown;
}

/** Where a record's nested steps ran, as a pointer inside the step (StepResult.branch). */
const listOf = (branch: unknown) => (typeof branch === 'number' ? `/cases/${branch}/steps` : `/${branch}`);

/** The engine's records by pointer: a branch's records under its list, a loop's first iteration's. */
function engineRows(records: ExecutionStep[], at = '/steps'): Row[] {
  return records.flatMap((r, i) => {
    const here = `${at}/${i}`;
    const row: Row = { at: here, name: r.name, status: r.status, output: r.output };
    if (r.branch !== undefined) row.branch = r.branch;
    const nested =
      r.type === 'forEach'
        ? engineRows(r.iterations?.[0]?.steps ?? [], `${here}/steps`)
        : engineRows(r.steps ?? [], `${here}${listOf(r.branch)}`);
    return [row, ...nested];
  });
}

/** The dry run's result at each of the engine's pointers, as a record would say it. */
async function previewRows(steps: Step[], item: unknown, run: Execution | undefined, at: string[]) {
  const sim = await simulate(steps, item, run, 'wf-parity');
  const names = new Map(walkSteps(steps).map((t) => [t.at, t.step.name]));
  return at.map((pointer): Row => {
    const entry = sim.byPath[pointer];
    if (!entry)
      return { at: pointer, name: names.get(pointer) ?? '?', status: 'not previewed', output: undefined };
    const r = entry.result;
    const row: Row = {
      at: pointer,
      name: names.get(pointer) ?? '?',
      status:
        r.error || r.stopped === 'failed' ? 'failed' : r.stopped === 'filtered' ? 'filtered' : 'succeeded',
      // A step that fails has no output in a record.
      output: r.error ? null : r.output,
    };
    if (r.branch !== undefined) row.branch = r.branch;
    return row;
  });
}

/** The engine's result as the execution the editor would get for its last test run. */
function asExecution(r: RunResult, item: unknown): Execution {
  return {
    id: 'ex-parity',
    workflowId: 'wf-parity',
    workflowVersion: 1,
    mode: 'test',
    status: r.status,
    trigger: item,
    steps: r.steps,
    error: r.error,
    attempt: 1,
    retryOf: null,
    createdAt: '',
    startedAt: '',
    finishedAt: '',
  } as unknown as Execution;
}

async function compare(steps: Record<string, unknown>[], item: unknown) {
  const ran = await engine.run(workflow(steps), item, { executionId: 'ex-parity', mode: 'test' });
  const expected = engineRows(ran.steps as unknown as ExecutionStep[]);
  const got = await previewRows(
    steps as Step[],
    item,
    asExecution(ran, item),
    expected.map((r) => r.at),
  );
  expect(got).toEqual(expected);
  return { ran, rows: expected };
}

const item = {
  method: 'POST',
  headers: { 'x-github-event': 'push' },
  body: {
    amount: 250,
    lines: [
      { sku: 'a', qty: 2 },
      { sku: 'b', qty: 0 },
    ],
    customer: { name: 'Ann' },
  },
};

describe('the dry run and the engine agree', () => {
  it('on set: dotted names, keepInput, typed expressions', async () => {
    const { ran } = await compare(
      [
        {
          type: 'set',
          name: 'shape',
          fields: { 'who.name': '{{ body.customer.name }}', total: '{{ body.amount * 2 }}' },
        },
        {
          type: 'set',
          name: 'more',
          keepInput: true,
          fields: { flag: true, n: 3, text: 'total {{ total }}' },
        },
      ],
      item,
    );
    expect(ran.status).toBe('succeeded');
  });

  it('on a filter that lets the run go on, and one that stops it', async () => {
    await compare(
      [
        { type: 'filter', name: 'big', condition: '{{ body.amount > 100 }}' },
        { type: 'set', name: 'kept', fields: { a: '{{ body.amount }}' } },
      ],
      item,
    );
    const { ran } = await compare(
      [
        { type: 'filter', name: 'small', condition: '{{ body.amount < 100 }}' },
        { type: 'set', name: 'never', fields: { a: 1 } },
      ],
      item,
    );
    expect(ran.status).toBe('filtered');
  });

  it('on if, its branch, its nested steps and what comes after', async () => {
    const { rows } = await compare(
      [
        {
          type: 'if',
          name: 'check',
          condition: '{{ body.amount > 100 }}',
          then: [{ type: 'set', name: 'tag', fields: { size: 'big', amount: '{{ body.amount }}' } }],
          else: [{ type: 'set', name: 'small', fields: { size: 'small' } }],
        },
        { type: 'set', name: 'after', fields: { got: '{{ size }}', fromSteps: '{{ $steps.check.size }}' } },
      ],
      item,
    );
    expect(rows.map((r) => r.at)).toEqual(['/steps/0', '/steps/0/then/0', '/steps/1']);
  });

  it('on switch: an equals case, a when case, the default, and no match without a default', async () => {
    const route = (event: string, withDefault: boolean) => ({
      type: 'switch',
      name: 'route',
      value: '{{ headers."x-github-event" }}',
      cases: [
        { equals: 'issues', steps: [{ type: 'set', name: 'on issues', fields: { kind: 'issues' } }] },
        {
          when: `{{ headers."x-github-event" = "${event}" }}`,
          steps: [{ type: 'set', name: 'on when', fields: { kind: 'when' } }],
        },
      ],
      ...(withDefault ? { default: [{ type: 'set', name: 'other', fields: { kind: 'other' } }] } : {}),
    });
    for (const [event, withDefault, branch] of [
      ['push', true, 1],
      ['pull', true, 'default'],
      ['pull', false, undefined],
    ] as const) {
      const { rows } = await compare(
        [route(event, withDefault), { type: 'set', name: 'next', keepInput: true, fields: { z: 1 } }],
        item,
      );
      expect(rows[0]!.branch).toBe(branch);
    }
  });

  it('on forEach with $item and $index, a filter inside, and nested if', async () => {
    const { ran } = await compare(
      [
        {
          type: 'forEach',
          name: 'lines',
          items: '{{ body.lines }}',
          steps: [
            { type: 'filter', name: 'has qty', condition: '{{ $item.qty > 0 }}' },
            {
              type: 'if',
              name: 'first?',
              condition: '{{ $index = 0 }}',
              then: [{ type: 'set', name: 'line', fields: { sku: '{{ $item.sku }}', at: '{{ $index }}' } }],
            },
          ],
        },
        { type: 'set', name: 'count', fields: { n: '{{ $count($steps.lines) }}' } },
      ],
      item,
    );
    expect(ran.output).toEqual({ n: 1 });
  });

  it('on code: later steps read the output the test run recorded', async () => {
    await compare(
      [
        { type: 'code', name: 'calc', source: 'return { doubled: $input.body.amount * 2 };' },
        { type: 'set', name: 'use', fields: { d: '{{ $steps.calc.doubled }}', same: '{{ doubled }}' } },
      ],
      item,
    );
  });

  it('on fail, and on a condition that is not true or false', async () => {
    const { ran } = await compare(
      [
        { type: 'set', name: 'before', fields: { a: 1 } },
        { type: 'fail', name: 'stop', message: 'Unknown event {{ $trigger.headers."x-github-event" }}' },
        { type: 'set', name: 'never', fields: { b: 2 } },
      ],
      item,
    );
    expect(ran.status).toBe('failed');
    const bad = await compare([{ type: 'if', name: 'odd', condition: '{{ body.amount }}', then: [] }], item);
    expect(bad.ran.status).toBe('failed');
  });

  it('on respond: status, headers and body, the input when no body', async () => {
    await compare(
      [
        {
          type: 'respond',
          name: 'answer',
          status: 201,
          headers: { 'x-id': '{{ body.customer.name }}' },
          body: { ok: true, amount: '{{ body.amount }}' },
        },
        { type: 'respond', name: 'echo' },
      ],
      item,
    );
  });

  it('on the edges: a missing value, an if with no else, a filter in a branch, a fail in a loop', async () => {
    await compare(
      [{ type: 'set', name: 'gap', fields: { x: '{{ body.missing }}', y: 'a{{ body.missing }}b' } }],
      item,
    );
    await compare(
      [
        {
          type: 'if',
          name: 'no',
          condition: '{{ body.amount > 1000 }}',
          then: [{ type: 'set', name: 't', fields: {} }],
        },
      ],
      item,
    );
    await compare(
      [
        {
          type: 'if',
          name: 'gate',
          condition: '{{ true }}',
          then: [{ type: 'filter', name: 'stop', condition: '{{ false }}' }],
        },
        { type: 'set', name: 'after', fields: {} },
      ],
      item,
    );
    await compare(
      [
        {
          type: 'forEach',
          name: 'each',
          items: '{{ body.lines }}',
          steps: [{ type: 'fail', name: 'boom', message: 'no {{ $item.sku }}' }],
        },
      ],
      item,
    );
    await compare([{ type: 'forEach', name: 'none', items: '{{ body.amount }}', steps: [] }], item);
    await compare([{ type: 'filter', name: 'odd', condition: '{{ body.customer }}' }], item);
    await compare(
      [
        {
          type: 'switch',
          name: 'num',
          value: '{{ body.amount }}',
          cases: [
            { equals: '250', steps: [] },
            { equals: 250, steps: [] },
          ],
        },
      ],
      item,
    );
  });
});
