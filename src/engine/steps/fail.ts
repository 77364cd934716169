/**
 * `fail`: end the execution as failed, with `message` (usually an expression) as its error. For
 * a branch that should never be reached, or input a workflow refuses.
 */
import Type from 'typebox';
import { defineStep, Expr, StepFailure } from './types.js';

const MAX_MESSAGE_CHARS = 2_000;

export const failStep = defineStep({
  type: 'fail',
  pure: true,
  description: 'Fail the execution with a message.',
  config: Type.Object({ message: Expr(Type.Unknown()) }, { additionalProperties: false }),
  run(config) {
    const value = config.message;
    let text = typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);
    if (text.trim() === '') text = 'The workflow failed (a fail step with an empty message).';
    if (text.length > MAX_MESSAGE_CHARS) text = `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…`;
    throw new StepFailure(text);
  },
});
