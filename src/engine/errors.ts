/**
 * The errors of a run and how a step's error is recorded: OutOfSlice (a sliced run gave up; not a
 * failure), ExecutionTimeout (the execution's budget is spent), and `stepError`, which turns what
 * a step threw into the ExecutionError of its record.
 */
import type { ExecutionError } from '../model/execution.js';
import { JsonSizer } from '../model/record-json.js';
import { DeadlineReached, ExpressionError } from './expressions.js';
import { StepFailure } from './steps/types.js';
import type { Run } from './types.js';

/** A run given `sliceMs` did not finish within it (see RunContext.sliceMs). */
export class OutOfSlice extends Error {
  constructor(readonly ms: number) {
    super(`The run did not finish within its slice of ${ms} ms.`);
    this.name = 'OutOfSlice';
  }
}

export class ExecutionTimeout extends Error {
  constructor(readonly ms: number) {
    super(
      `The execution ran longer than its budget of ${ms} ms (HOOKFLOW_EXECUTION_TIMEOUT_MS) and was stopped.`,
    );
    this.name = 'ExecutionTimeout';
  }
}

/** An error message is kept to its first this many characters (a `fail` step can say anything). */
const MAX_ERROR_MESSAGE = 16_384;

/** describeValue serialises values up to this size (to show the first 57 characters). */
const PREVIEW_MAX = 4096;

/** Throws ExecutionTimeout when the run's budget (or slice) is spent. */
export function checkDeadline(run: Run, now: number): void {
  if (run.budget?.signal.aborted || now > run.until) throw new ExecutionTimeout(run.timeoutMs);
}

/**
 * A step's error as recorded; past the budget, whatever the step threw is a consequence: say why.
 * Throws OutOfSlice instead when a sliced run ran out of its slice: the run is handed to an
 * executor, not failed here.
 */
export function stepError(err: unknown, step: string, run: Run): ExecutionError {
  if (err instanceof OutOfSlice) throw err;
  const timedOut =
    run.budget?.signal.aborted || err instanceof DeadlineReached || err instanceof ExecutionTimeout;
  // A sliced run stopped by an expression's own time budget (JSONata's D1012) is given up too: on
  // a machine that descheduled it, that budget could fire before the slice's deadline was seen,
  // and the executor, running it again with the whole budget, decides what it really does.
  const expressionTimedOut = err instanceof ExpressionError && err.code === 'budget_time';
  if (run.sliced && (timedOut || expressionTimedOut)) throw new OutOfSlice(run.ctx.sliceMs!);
  const cause = timedOut ? new ExecutionTimeout(run.timeoutMs) : err;
  const error = { step, ...describeError(cause) };
  // The error is stored twice (the execution's and the step's) and told to error workflows.
  if (error.message.length > MAX_ERROR_MESSAGE)
    error.message = `${error.message.slice(0, MAX_ERROR_MESSAGE)}… (${error.message.length} characters in all)`;
  return error;
}

export function describeError(err: unknown): Omit<ExecutionError, 'step'> {
  if (err instanceof ExpressionError) {
    const shown = err.expression.length > 120 ? `${err.expression.slice(0, 117)}…` : err.expression;
    return {
      message: `The expression {{${shown}}} in ${err.field} failed: ${err.message}`,
      field: err.field,
      expression: err.expression,
      ...(err.position !== undefined ? { position: err.position } : {}),
      ...(err.code !== undefined ? { code: err.code } : {}),
    };
  }
  if (err instanceof StepFailure)
    return {
      message: err.message,
      ...(err.field ? { field: err.field } : {}),
      ...(err.code ? { code: err.code } : {}),
    };
  if (err instanceof ExecutionTimeout) return { message: err.message, code: 'execution_timeout' };
  return { message: err instanceof Error ? err.message : String(err) };
}

/** A value as an error message shows it: its kind and its first characters as JSON. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const what = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
  // Measured first: a value may be far bigger as JSON than in memory (model/record-json.ts).
  const size = new JsonSizer().size(value, PREVIEW_MAX);
  if (size > PREVIEW_MAX) {
    const head = typeof value === 'string' ? JSON.stringify(value.slice(0, 56)).slice(0, 57) : '…';
    return `${what} (${head}…, more than ${PREVIEW_MAX} bytes as JSON)`;
  }
  const text = JSON.stringify(value);
  const shown = text.length > 60 ? `${text.slice(0, 57)}…` : text;
  return `${what} (${shown})`;
}
