import { describe, expect, it } from 'vitest';
import { compileTemplate } from '../../src/engine/expressions.js';
import { stepType } from '../../src/engine/steps/index.js';
import { renderedCheckNeeded, stepConfig } from '../../src/engine/validate.js';
import type { Step } from '../../src/model/workflow.js';

const BUDGET = { timeoutMs: 1_000, maxDepth: 100 };

function needed(step: Record<string, unknown>): boolean {
  const config = stepConfig(step as unknown as Step);
  const { template, errors } = compileTemplate(config, '', BUDGET);
  expect(errors).toEqual([]);
  return renderedCheckNeeded(stepType(step.type as string)!, template, undefined);
}

describe('renderedCheckNeeded', () => {
  it.each<[string, Record<string, unknown>]>([
    ['set: expressions as field values (any value)', { type: 'set', fields: { a: '{{ body.x }}', b: 1 } }],
    ['set: text with an expression as a field value', { type: 'set', fields: { a: 'id-{{ body.x }}' } }],
    ['set: keepInput fixed', { type: 'set', keepInput: true, fields: { a: '{{ body.x }}' } }],
    ['filter: the condition is checked by the step itself', { type: 'filter', condition: '{{ a = 1 }}' }],
    ['respond: a body of any value', { type: 'respond', body: '{{ body }}' }],
  ])('skips the check when nothing rendered can break the schema: %s', (_name, step) => {
    expect(needed({ name: 's', ...step })).toBe(false);
  });

  it.each<[string, Record<string, unknown>]>([
    [
      'set: keepInput from an expression (must be a boolean)',
      { type: 'set', keepInput: '{{ true }}', fields: {} },
    ],
    ['respond: a status from an expression (must be an integer)', { type: 'respond', status: '{{ 200 }}' }],
    ['http: a url from an expression (must be text of a shape)', { type: 'http', url: '{{ body.url }}' }],
    ['set: a fixed part the schema refuses', { type: 'set', fields: { a: '{{ body.x }}' }, extra: 1 }],
  ])('keeps the check otherwise: %s', (_name, step) => {
    expect(needed({ name: 's', ...step })).toBe(true);
  });
});
