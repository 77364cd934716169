/** The editor's model of the SPEC 7f step types `store` and `workflow`: forms ↔ API JSON, and a target's input. */
import { describe, expect, it } from 'vitest';
import type { FieldProblem } from '../../web/src/api.js';
import { type Drafts, newStep, stepDraftFrom, stepFrom } from '../../web/src/lib/draft.js';
import { inputMembers } from '../../web/src/lib/steps/workflow.js';
import type { Step } from '../../web/src/types.js';

const roundTrip = (step: Step) => {
  const problems: FieldProblem[] = [];
  return { step: stepFrom(stepDraftFrom(step), 0, problems), problems };
};

describe('the store step form', () => {
  it('gives back every stored operation unchanged', () => {
    for (const step of [
      { name: 'seen', type: 'store', op: 'get', key: 'order:{{ body.id }}' },
      {
        name: 'keep',
        type: 'store',
        op: 'set',
        key: 'k',
        value: { a: '{{ body.a }}' },
        ttlSeconds: 60,
        scope: 'global',
      },
      { name: 'once', type: 'store', op: 'setIfAbsent', key: 'k', value: 'text' },
      { name: 'count', type: 'store', op: 'increment', key: 'n', by: '{{ body.qty }}', ttlSeconds: 3600 },
      { name: 'drop', type: 'store', op: 'delete', key: 'k' },
    ])
      expect(roundTrip(step)).toEqual({ step, problems: [] });
  });

  it('sends only what the operation takes, and names what is missing', () => {
    const d: Drafts['store'] = {
      ...newStep('store', []),
      op: 'get',
      entryKey: 'k',
      value: '{"a": 1}',
      by: '2',
      ttlSeconds: '60',
    };
    expect(stepFrom(d, 0, [])).toEqual({ name: 'store', type: 'store', op: 'get', key: 'k' });
    expect(stepFrom({ ...d, op: 'increment' }, 0, [])).toEqual({
      name: 'store',
      type: 'store',
      op: 'increment',
      key: 'k',
      by: 2,
      ttlSeconds: 60,
    });
    expect(stepFrom({ ...d, op: 'set' }, 0, [])).toMatchObject({ value: { a: 1 }, ttlSeconds: 60 });
    const problems: FieldProblem[] = [];
    stepFrom({ ...d, op: 'set', entryKey: ' ', value: '' }, 3, problems);
    expect(problems.map((p) => p.field)).toEqual(['/steps/3/key', '/steps/3/value']);
  });
});

describe('the workflow step form', () => {
  it('gives back a stored step unchanged, an expression for wait included', () => {
    for (const step of [
      { name: 'run', type: 'workflow', workflowId: 'w1' },
      { name: 'run', type: 'workflow', workflowId: 'w1', input: { id: '{{ body.id }}' }, wait: false },
      { name: 'run', type: 'workflow', workflowId: 'w1', input: '{{ body }}', wait: '{{ body.sync }}' },
    ])
      expect(roundTrip(step)).toEqual({ step, problems: [] });
  });

  it('needs a target', () => {
    const problems: FieldProblem[] = [];
    expect(stepFrom(newStep('workflow', []), 1, problems)).toEqual({
      name: 'workflow',
      type: 'workflow',
      workflowId: '',
    });
    expect(problems).toEqual([{ field: '/steps/1/workflowId', message: 'needs a workflow to run' }]);
  });

  it('reads the input a target takes from its newest event, else from its learned fields', () => {
    const learned = [
      { path: 'body.orderId', type: 'string', example: 'A-1' },
      { path: 'body.customer.name', type: 'string', example: 'Ann' },
      { path: 'body.lines[].sku', type: 'string', example: 'x' },
      { path: 'headers.host', type: 'string', example: 'h' },
    ];
    expect(inputMembers(learned, undefined)).toEqual([
      { name: 'orderId', type: 'string', example: 'A-1' },
      { name: 'customer', type: 'object', example: undefined },
      { name: 'lines', type: 'array', example: undefined },
    ]);
    expect(inputMembers(learned, { total: 3, tags: ['a'] })).toEqual([
      { name: 'total', type: 'number', example: 3 },
      { name: 'tags', type: 'array', example: ['a'] },
    ]);
  });
});
