/** The editor's model of the SPEC 7b step types: forms ↔ API JSON, the dry run's branches and loops, $item fields. */
import { describe, expect, it } from 'vitest';
import type { FieldProblem } from '../../web/src/api.js';
import {
  allNames,
  type Drafts,
  newStep,
  stepDraftFrom,
  stepFrom,
  stepsFrom,
} from '../../web/src/lib/draft.js';
import { simulate } from '../../web/src/lib/simulate.js';
import { itemFields, plainPath, walkSteps } from '../../web/src/lib/stepTree.js';
import type { Execution, Step } from '../../web/src/types.js';

const roundTrip = (step: Step) => {
  const problems: FieldProblem[] = [];
  return { step: stepFrom(stepDraftFrom(step), 0, problems), problems };
};

const routed: Step = {
  name: 'route',
  type: 'switch',
  value: '{{ headers."x-github-event" }}',
  cases: [
    { equals: 'push', steps: [{ name: 'on push', type: 'set', fields: { kind: 'push' } }] },
    { equals: 42, steps: [] },
    { when: '{{ body.amount > 100 }}', steps: [{ name: 'big', type: 'fail', message: 'too big' }] },
  ],
  default: [{ name: 'other', type: 'set', fields: { kind: '{{ headers."x-github-event" }}' } }],
};

describe('flow step forms', () => {
  it('give back every SPEC 7b step unchanged', () => {
    const steps: Step[] = [
      {
        name: 'check',
        type: 'if',
        condition: '{{ body.ok }}',
        then: [{ name: 'yes', type: 'set', fields: { a: '1' } }],
        else: [{ name: 'no', type: 'fail', message: 'not ok: {{ body.why }}' }],
      },
      routed,
      {
        name: 'lines',
        type: 'forEach',
        items: '{{ body.lines }}',
        steps: [{ name: 'double', type: 'code', source: 'return $input.qty * 2;' }],
      },
      { name: 'pause', type: 'wait', seconds: 30 },
      { name: 'later', type: 'wait', until: '{{ body.at }}' },
    ];
    for (const step of steps) expect(roundTrip(step)).toEqual({ step, problems: [] });
  });

  it('reads a case value as JSON, and other text as a string', () => {
    const d = stepDraftFrom(routed) as Drafts['switch'];
    expect(d.cases.map((c) => [c.kind, c.equals, c.when])).toEqual([
      ['equals', 'push', ''],
      ['equals', '42', ''],
      ['when', '', '{{ body.amount > 100 }}'],
    ]);
    d.cases[0]!.equals = '{"a": [1]}';
    d.cases[1]!.equals = '"42"';
    const step = stepFrom(d, 0, []);
    expect((step.cases as { equals?: unknown }[]).map((c) => c.equals)).toEqual([
      { a: [1] },
      '42',
      undefined,
    ]);
  });

  it('names problems by their nested path, as the server does', () => {
    const d = stepDraftFrom(routed) as Drafts['switch'];
    d.value = '';
    d.cases[0]!.equals = ' ';
    d.cases[2]!.when = '';
    (d.cases[2]!.steps[0] as Drafts['fail']).message = '';
    d.default[0]!.name = '';
    const problems: FieldProblem[] = [];
    stepFrom(d, 1, problems);
    expect(problems.map((p) => p.field).sort()).toEqual([
      '/steps/1/cases/0/equals',
      '/steps/1/cases/2/steps/0/message',
      '/steps/1/cases/2/when',
      '/steps/1/default/0/name',
      '/steps/1/value',
    ]);
  });

  it('sends else and default only when they hold steps', () => {
    const d = newStep('if', []);
    d.condition = '{{ true }}';
    expect(stepFrom(d, 0, [])).toEqual({ name: 'if', type: 'if', condition: '{{ true }}', then: [] });
    const s = newStep('switch', []);
    expect(s.cases).toHaveLength(1);
    s.cases[0]!.equals = 'a';
    s.value = '{{ x }}';
    expect(stepFrom(s, 0, [])).toEqual({
      name: 'switch',
      type: 'switch',
      value: '{{ x }}',
      cases: [{ equals: 'a', steps: [] }],
    });
  });

  it('reports a name used twice anywhere in the workflow, and numbers new steps past every name', () => {
    const list = [stepDraftFrom(routed), stepDraftFrom({ name: 'on push', type: 'set', fields: {} })];
    const problems: FieldProblem[] = [];
    stepsFrom(list, '/steps', problems);
    expect(problems).toEqual([{ field: '/steps/1/name', message: '"on push" is used by another step' }]);
    expect([...allNames(list)].sort()).toEqual(['big', 'on push', 'other', 'route']);
    expect(newStep('set', list).name).toBe('set');
    const taken = [...list, stepDraftFrom({ name: 'x', type: 'if', then: [{ name: 'set', type: 'set' }] })];
    expect(newStep('set', taken).name).toBe('set2');
  });

  it.each([
    ['set', { fields: [{ name: '', value: '' }] }],
    ['http', { url: '', method: 'POST' }],
    ['wait', { seconds: '60', waitBy: 'seconds' }],
    ['code', { source: expect.stringContaining('return { ...$input };') }],
    ['fail', { message: '' }],
    ['forEach', { items: '', steps: [] }],
    ['switch', { cases: [expect.objectContaining({ kind: 'equals', steps: [] })] }],
  ])('starts a new %s step with what its form needs', (type, start) => {
    expect(newStep(type, [])).toMatchObject({ type, ...start });
  });

  it('checks wait, fail and code fields', () => {
    const problems: FieldProblem[] = [];
    const wait = newStep('wait', []);
    expect(stepFrom(wait, 0, problems)).toEqual({ name: 'wait', type: 'wait', seconds: 60 });
    wait.waitBy = 'until';
    stepFrom(wait, 0, problems);
    const fail = newStep('fail', []);
    stepFrom(fail, 1, problems);
    const code = newStep('code', []);
    code.source = ' ';
    stepFrom(code, 2, problems);
    expect(problems.map((p) => p.field)).toEqual(['/steps/0/until', '/steps/1/message', '/steps/2/source']);
  });

  it('keeps configuration keys the form does not edit', () => {
    const d = stepDraftFrom({ ...routed, note: 'x' } as Step);
    expect(stepFrom(d, 0, [])).toMatchObject({ note: 'x' });
  });
});

const item = {
  headers: { 'x-github-event': 'push' },
  body: {
    amount: 5,
    lines: [
      { sku: 'a', qty: 1 },
      { sku: 'b', qty: 3 },
    ],
  },
};
const run = (steps: Step[], recorded?: Execution) => simulate(steps, item, recorded, 'wf-1');

describe('the dry run of flow steps', () => {
  it('takes the switch case the event matches, previews the others as not taken', async () => {
    const sim = await run([routed, { name: 'after', type: 'set', fields: { k: '{{ kind }}' } }]);
    expect(sim.results[0]).toMatchObject({ branch: 0, output: { kind: 'push' } });
    expect(sim.byPath['/steps/0/cases/0/steps/0']?.result.notTaken).toBeUndefined();
    expect(sim.byPath['/steps/0/default/0']?.result).toMatchObject({
      notTaken: true,
      output: { kind: 'push' },
    });
    expect(sim.results[1]).toEqual({ output: { k: 'push' } });
    // Outputs of the branch not taken are not seen by later steps.
    expect(Object.keys(sim.scopes[1]!.steps)).toEqual(['on push', 'route']);
  });

  it('runs the default when no case matches, and passes the input on with no default', async () => {
    const other = { ...item, headers: { 'x-github-event': 'issues' } };
    const sim = await simulate([routed], other, undefined, 'wf-1');
    expect(sim.results[0]).toMatchObject({ branch: 'default', output: { kind: 'issues' } });
    const bare = await simulate([{ ...routed, default: undefined }], other, undefined, 'wf-1');
    expect(bare.results[0]!.branch).toBeUndefined();
    expect(bare.results[0]!.output).toEqual(other);
  });

  it('chooses then or else, with its output, and refuses a condition that is not true or false', async () => {
    const step: Step = {
      name: 'big?',
      type: 'if',
      condition: '{{ body.amount > 3 }}',
      then: [{ name: 't', type: 'set', fields: { big: true } }],
      else: [],
    };
    expect((await run([step])).results[0]).toMatchObject({ branch: 'then', output: { big: true } });
    const small = await run([{ ...step, condition: '{{ body.amount > 30 }}' }]);
    expect(small.results[0]).toMatchObject({ branch: 'else', output: item });
    const bad = await run([{ ...step, condition: '{{ body.amount }}' }]);
    expect(bad.results[0]!.error).toMatch(/must be true or false/);
  });

  it('loops with $item and $index, drops filtered elements, and fails on a non-list', async () => {
    const loop: Step = {
      name: 'each',
      type: 'forEach',
      items: '{{ body.lines }}',
      steps: [
        { name: 'keep', type: 'filter', condition: '{{ $item.qty > 1 }}' },
        { name: 'row', type: 'set', fields: { sku: '{{ $item.sku }}', at: '{{ $index }}' } },
      ],
    };
    const sim = await run([loop]);
    expect(sim.results[0]!.output).toEqual([{ sku: 'b', at: 1 }]);
    expect(sim.byPath['/steps/0/steps/1']?.scope).toMatchObject({ item: { sku: 'a', qty: 1 }, index: 0 });
    const bad = await run([{ ...loop, items: '{{ body.amount }}' }]);
    expect(bad.results[0]!.error).toMatch(/must be a list/);
    // Its steps still get a scope, so their fields can be edited.
    expect(bad.byPath['/steps/0/steps/1']).toBeDefined();
  });

  it('says when the last test run took another branch than the preview', async () => {
    const record = (branch: unknown) =>
      ({
        id: 'e1',
        workflowVersion: 3,
        status: 'succeeded',
        steps: [{ name: 'route', type: 'switch', status: 'succeeded', output: null, error: null, branch }],
      }) as unknown as Execution;
    const other = await run([routed], record('default'));
    expect(other.results[0]!.note).toMatch(
      /takes case 1.*In the last test run \(v3\) it took the default\.$/,
    );
    const same = await run([routed], record(0));
    expect(same.results[0]!.note).not.toMatch(/last test run/);
  });

  it('says code runs on the server, unless the last test run gave its output', async () => {
    const code: Step = { name: 'c', type: 'code', source: 'return 1' };
    expect((await run([code])).results[0]!.note).toMatch(/code runs on the server/i);
    const recorded = {
      id: 'e1',
      workflowVersion: 2,
      status: 'succeeded',
      steps: [{ name: 'c', type: 'code', status: 'succeeded', output: 1, error: null, logs: ['hi'] }],
    } as unknown as Execution;
    expect((await run([code], recorded)).results[0]).toMatchObject({ output: 1 });
  });
});

describe('steps by path and $item fields', () => {
  it('walks nested lists depth first with their loops and parents', () => {
    const tree = walkSteps([
      routed,
      { name: 'each', type: 'forEach', items: '{{ body.lines }}', steps: [{ name: 'in', type: 'set' }] },
    ]);
    expect(tree.map((t) => t.at)).toEqual([
      '/steps/0',
      '/steps/0/cases/0/steps/0',
      '/steps/0/cases/2/steps/0',
      '/steps/0/default/0',
      '/steps/1',
      '/steps/1/steps/0',
    ]);
    expect(tree[5]!.loops.map((l) => l.at)).toEqual(['/steps/1']);
    expect(tree[5]!.parents).toEqual(['/steps/1']);
  });

  it('offers the fields of the loop element from the learned schema, or from the element seen', () => {
    expect(plainPath('{{ body.lines }}')).toBe('body.lines');
    expect(plainPath('{{ $trigger.body.lines }}')).toBe('body.lines');
    expect(plainPath('{{ $filter(x) }}')).toBeUndefined();
    const learned = [
      { label: 'body.lines[].sku', expression: 'body.lines.sku', type: 'string', example: 'a' },
      { label: 'body.tags[]', expression: 'body.tags', type: 'array', example: ['x'] },
      { label: 'body.total', expression: 'body.total', type: 'number', example: 1 },
    ];
    expect(itemFields('{{ body.lines }}', learned, undefined).map((f) => [f.label, f.expression])).toEqual([
      ['$item.sku', '$item.sku'],
    ]);
    expect(itemFields('{{ body.tags }}', learned, undefined).map((f) => f.expression)).toEqual(['$item']);
    expect(
      itemFields('{{ body.lines }}', learned, { sku: 'a', n: { q: 1 } }).map((f) => f.expression),
    ).toEqual(['$item.sku', '$item.n.q']);
  });
});
