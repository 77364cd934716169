/**
 * A step type is one definition: its schema, its nested lists, its purity and its run. Two
 * throwaway types, defined here and nowhere in src/, are saved (validated), run and walked through
 * a registry that adds them (withStepTypes), the built-in ones untouched.
 */
import Type from 'typebox';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/run.js';
import { STEP_TYPES, withStepTypes } from '../../src/engine/steps/index.js';
import { defineStep, Expr } from '../../src/engine/steps/types.js';
import { validateSteps } from '../../src/engine/validate.js';
import type { Step } from '../../src/model/workflow.js';
import { andThen } from '../../src/shared/maybe-promise.js';
import { walkStepLists } from '../../src/shared/step-lists.js';
import { workflowFactory } from './workflow-fixture.js';

/** A leaf: the text of `value`, upper-cased. */
const shout = defineStep({
  type: 'shout',
  pure: true,
  description: 'Upper-case a text.',
  config: Type.Object({ value: Type.String({ maxLength: 100 }) }, { additionalProperties: false }),
  run: (config) => ({ output: config.value.toUpperCase() }),
});

/** A step holding steps: runs `steps` unless the condition is true. */
const unless = defineStep({
  type: 'unless',
  pure: true,
  description: 'Run the steps unless the condition is true.',
  config: Type.Object(
    { condition: Expr(Type.Boolean()), steps: Type.Array(Type.Unknown()) },
    { additionalProperties: false },
  ),
  lists: ['steps'],
  run: (_config, ctx) =>
    andThen(ctx.render!('/condition'), (value) =>
      value === true ? { output: ctx.input } : { output: ctx.input, branch: '/steps' },
    ),
});

const types = withStepTypes(shout, unless);
const engine = new Engine({ allowPrivateNetwork: false, executionTimeoutMs: 10_000, stepTypes: types });
afterAll(() => engine.close());
const workflow = workflowFactory('step-type');
const ctx = { executionId: 'ex-type', mode: 'test' as const };

const steps = [
  {
    name: 'maybe',
    type: 'unless',
    condition: '{{ body.quiet }}',
    steps: [{ name: 'loud', type: 'shout', value: '{{ body.text }}' }],
  },
] as unknown as Step[];

describe('a step type defined in one place', () => {
  it('is saved: validated against its schema, its nested list like the top level', () => {
    expect(validateSteps(steps, types)).toEqual([]);
    const bad = [{ ...steps[0], steps: [{ name: 'loud', type: 'shout', value: 1 }] }] as unknown as Step[];
    expect(validateSteps(bad, types)).toEqual([
      { field: '/steps/0/steps/0/value', message: expect.any(String) },
    ]);
    // Unknown to the built-in registry, which the test left as it was.
    expect(STEP_TYPES.has('shout')).toBe(false);
    expect(validateSteps(steps)[0]).toMatchObject({ field: '/steps/0/type' });
  });

  it('runs: the holder chooses its list, the leaf runs inside it, records nest', async () => {
    const loud = await engine.run(workflow(steps), { body: { quiet: false, text: 'hi' } }, ctx);
    expect(loud.status).toBe('succeeded');
    expect(loud.output).toBe('HI');
    expect(loud.steps[0]).toMatchObject({
      name: 'maybe',
      branch: 'steps',
      steps: [{ name: 'loud', type: 'shout', status: 'succeeded', output: 'HI' }],
    });
    const quiet = await engine.run(workflow(steps), { body: { quiet: true, text: 'hi' } }, ctx);
    expect(quiet.output).toEqual({ body: { quiet: true, text: 'hi' } });
    expect(quiet.steps[0]!.steps).toEqual([]);
    // Pure, nested ones included: it may run before its commit.
    expect(engine.runsBeforeCommit(workflow(steps))).toBe(true);
  });

  it('answers at once, with no promise, when its steps do', () => {
    const result = engine.run(workflow(steps), { body: { quiet: false, text: 'hi' } }, ctx);
    expect(result).not.toBeInstanceOf(Promise);
  });

  it('is walked: every step with its JSON pointer, by the declared lists', () => {
    const walked = [...walkStepLists(steps, (type) => types.get(type as string)?.lists)];
    expect(walked.map((w) => w.pointer)).toEqual(['/steps/0', '/steps/0/steps/0']);
  });
});
