/**
 * The steps that hold steps (SPEC 7b): `if`, `switch`, `forEach`. Declared here like every step
 * type (schema of their own fields, description, purity); the engine runs them itself (run.ts:
 * choosing a branch or iterating is the step loop's business, not a step's), so `run` is never
 * called. `lists` says where a stored step keeps its nested step lists, for validation (each list
 * is checked like the top level) and for compiling.
 */
import Type from 'typebox';
import type { FieldError } from '../../errors.js';
import { defineStep, Expr, StepFailure } from './types.js';

/** A nested step list as stored: checked step by step by validateSteps (run.ts). */
const StepList = Type.Array(Type.Unknown(), { maxItems: 200 });

/** Most cases one `switch` may have. */
export const MAX_SWITCH_CASES = 100;

const notRunDirectly = (): never => {
  throw new StepFailure('A step holding steps is run by the engine, not by itself.');
};

export const ifStep = defineStep({
  type: 'if',
  pure: true,
  description: 'Run the `then` steps when the condition is true, else the `else` steps.',
  config: Type.Object(
    { condition: Expr(Type.Unknown()), then: StepList, else: Type.Optional(StepList) },
    { additionalProperties: false },
  ),
  run: notRunDirectly,
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
  run: notRunDirectly,
});

export const forEachStep = defineStep({
  type: 'forEach',
  pure: true,
  description: 'Run the steps once per element of `items`, with `$item` and `$index`.',
  config: Type.Object({ items: Expr(Type.Unknown()), steps: StepList }, { additionalProperties: false }),
  run: notRunDirectly,
});

export interface NestedList {
  /** JSON pointer of the list inside the step (`/then`, `/cases/1/steps`). */
  field: string;
  steps: unknown[];
}

/** The nested step lists of a stored step (none for steps that hold none). */
export function nestedLists(step: Record<string, unknown>): NestedList[] {
  const lists: NestedList[] = [];
  const add = (field: string, steps: unknown) => {
    if (Array.isArray(steps)) lists.push({ field, steps });
  };
  switch (step.type) {
    case 'if':
      add('/then', step.then);
      add('/else', step.else);
      break;
    case 'switch':
      if (Array.isArray(step.cases))
        for (const [i, c] of (step.cases as unknown[]).entries())
          add(`/cases/${i}/steps`, (c as { steps?: unknown } | null)?.steps);
      add('/default', step.default);
      break;
    case 'forEach':
      add('/steps', step.steps);
      break;
  }
  return lists;
}

/** Whether a step type holds steps. */
export const FLOW_TYPES: ReadonlySet<string> = new Set(['if', 'switch', 'forEach']);
