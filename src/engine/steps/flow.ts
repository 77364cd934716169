/**
 * The steps that hold steps (SPEC 7b): `if`, `switch`, `forEach`. Each declares where it keeps
 * its step lists (`lists`) and, as `run`, which list runs: the engine runs the list with the same
 * loop as the top level (run.ts, flow.ts), records it and parks and resumes inside it. `run` gets
 * the fields as stored and renders what it needs (`ctx.render`): a `switch` renders `value` only
 * for an `equals` case and stops at the first case that matches.
 */
import Type from 'typebox';
import type { FieldError } from '../../errors.js';
import { jsonEqual } from '../../shared/json-equal.js';
import { andThen, type MaybePromise } from '../../shared/maybe-promise.js';
import { describeValue } from '../errors.js';
import { defineStep, Expr, StepFailure, type StepContext, type StepOutcome } from './types.js';

/** A nested step list as stored: checked step by step by validateSteps. */
const StepList = Type.Array(Type.Unknown(), { maxItems: 200 });

/** Most cases one `switch` may have. */
export const MAX_SWITCH_CASES = 100;

/** HOOKFLOW_FOREACH_MAX_ITEMS when not set: most elements one `forEach` runs over. */
export const DEFAULT_FOREACH_MAX_ITEMS = 10_000;

export const ifStep = defineStep({
  type: 'if',
  pure: true,
  description: 'Run the `then` steps when the condition is true, else the `else` steps.',
  config: Type.Object(
    { condition: Expr(Type.Unknown()), then: StepList, else: Type.Optional(StepList) },
    { additionalProperties: false },
  ),
  lists: ['then', 'else'],
  run(_config, ctx) {
    return andThen(render(ctx, '/condition'), (value) => ({
      output: ctx.input,
      branch: condition(value, '/condition') ? '/then' : '/else',
    }));
  },
});

const SwitchCase = Type.Object(
  { equals: Type.Optional(Type.Unknown()), when: Type.Optional(Expr(Type.Unknown())), steps: StepList },
  { additionalProperties: false },
);

export const switchStep = defineStep({
  type: 'switch',
  pure: true,
  description: 'Run the steps of the first case whose value equals `value` or whose `when` is true.',
  config: Type.Object(
    {
      value: Type.Optional(Type.Unknown()),
      cases: Type.Array(SwitchCase, { maxItems: MAX_SWITCH_CASES }),
      default: Type.Optional(StepList),
    },
    { additionalProperties: false },
  ),
  lists: ['cases/*/steps', 'default'],
  check(config) {
    const errors: FieldError[] = [];
    config.cases.forEach((c, i) => {
      const hasEquals = Object.hasOwn(c, 'equals');
      const hasWhen = Object.hasOwn(c, 'when');
      if (hasEquals === hasWhen)
        errors.push({
          field: `/cases/${i}`,
          message: hasEquals
            ? 'has both `equals` and `when`: give one'
            : 'needs `equals` (a JSON value) or `when` (a condition)',
        });
      else if (hasEquals && !Object.hasOwn(config, 'value'))
        errors.push({ field: '/value', message: 'is required when a case uses `equals`' });
    });
    return errors;
  },
  run(config, ctx) {
    return chooseCase(
      config.cases as Record<string, unknown>[],
      config.default !== undefined,
      ctx,
      0,
      undefined,
    );
  },
});

/**
 * The first case from `from` whose `equals` equals `value` (JSON equality; rendered once, when a
 * case first needs it) or whose `when` is true; else `default` when there is one.
 */
function chooseCase(
  cases: Record<string, unknown>[],
  hasDefault: boolean,
  ctx: StepContext,
  from: number,
  value: { rendered: unknown } | undefined,
): MaybePromise<StepOutcome> {
  for (let i = from; i < cases.length; i++) {
    const c = cases[i]!;
    if (Object.hasOwn(c, 'equals')) {
      if (!value)
        return andThen(render(ctx, '/value'), (rendered) =>
          chooseCase(cases, hasDefault, ctx, i, { rendered }),
        );
      if (jsonEqual(value.rendered, c.equals)) return { output: ctx.input, branch: `/cases/${i}/steps` };
    } else if (Object.hasOwn(c, 'when')) {
      const field = `/cases/${i}/when`;
      return andThen(render(ctx, field), (when) =>
        condition(when, field)
          ? { output: ctx.input, branch: `/cases/${i}/steps` }
          : chooseCase(cases, hasDefault, ctx, i + 1, value),
      );
    }
  }
  return hasDefault ? { output: ctx.input, branch: '/default' } : { output: ctx.input };
}

export const forEachStep = defineStep({
  type: 'forEach',
  pure: true,
  description: 'Run the steps once per element of `items`, with `$item` and `$index`.',
  config: Type.Object({ items: Expr(Type.Unknown()), steps: StepList }, { additionalProperties: false }),
  lists: ['steps'],
  run(_config, ctx) {
    return andThen(render(ctx, '/items'), (items) => {
      if (!Array.isArray(items))
        throw new StepFailure(`items must be an array, but it gave ${describeValue(items)}.`, {
          field: '/items',
        });
      const max = ctx.limits?.foreachMaxItems ?? DEFAULT_FOREACH_MAX_ITEMS;
      if (items.length > max)
        throw new StepFailure(
          `items has ${items.length} elements; a forEach runs over at most ${max} (HOOKFLOW_FOREACH_MAX_ITEMS).`,
          { field: '/items' },
        );
      return { output: null, each: items };
    });
  },
});

function render(ctx: StepContext, field: string): MaybePromise<unknown> {
  if (!ctx.render) throw new StepFailure('A step holding steps is run by the engine.');
  return ctx.render(field);
}

/** A condition's value: true, or false/nothing; anything else fails the step naming the field. */
function condition(value: unknown, field: string): boolean {
  if (value === true) return true;
  if (value === false || value === undefined || value === null) return false;
  throw new StepFailure(
    `The condition must be true or false, but it gave ${describeValue(value)}. Wrap it in $boolean(…) to test whether a value is present.`,
    { field },
  );
}
