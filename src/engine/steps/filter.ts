/**
 * `filter`: go on only when `condition` is true. False (or an expression that finds nothing)
 * ends the execution with status `filtered`; the remaining steps do not run. The item passes
 * through unchanged.
 */
import Type from 'typebox';
import { defineStep, Expr, StepFailure } from './types.js';

export const filterStep = defineStep({
  type: 'filter',
  pure: true,
  description: 'Stop the run (status `filtered`) unless the condition is true.',
  config: Type.Object(
    // Checked by hand after rendering (not by the schema) to say what the condition gave instead.
    { condition: Expr(Type.Unknown()) },
    { additionalProperties: false },
  ),
  run(config, { input }) {
    const value = config.condition;
    if (value === true) return { output: input };
    if (value === false || value === undefined || value === null) return { output: null, filtered: true };
    throw new StepFailure(
      `The condition must be true or false, but it gave ${describe(value)}. Wrap it in $boolean(…) to test whether a value is present.`,
      { field: '/condition' },
    );
  },
});

function describe(value: unknown): string {
  const text = JSON.stringify(value);
  const shown = text.length > 60 ? `${text.slice(0, 57)}…` : text;
  return `${Array.isArray(value) ? 'an array' : `a ${typeof value}`} (${shown})`;
}
