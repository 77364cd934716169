/**
 * `wait`: pause the execution for `seconds`, or until the time `until` (ISO-8601, usually an
 * expression), at most MAX_WAIT_DAYS ahead. The step parks the run (StepOutcome.park): the
 * execution is `waiting`, holds no executor slot, and the queue resumes it at that time, on any
 * executor; this step then completes with its input as output. A time in the past, or 0 seconds,
 * does not wait.
 */
import Type from 'typebox';
import type { FieldError } from '../../errors.js';
import { defineStep, Expr, StepFailure } from './types.js';

export const MAX_WAIT_DAYS = 30;
const MAX_WAIT_MS = MAX_WAIT_DAYS * 86_400_000;

export const waitStep = defineStep({
  type: 'wait',
  description: 'Pause the execution for a number of seconds or until a time (at most 30 days).',
  config: Type.Object(
    {
      seconds: Type.Optional(Expr(Type.Number({ minimum: 0, maximum: MAX_WAIT_MS / 1000 }))),
      until: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    },
    { additionalProperties: false },
  ),
  check(config) {
    const errors: FieldError[] = [];
    const has = (k: string) => Object.hasOwn(config, k);
    if (has('seconds') === has('until'))
      errors.push({
        field: has('seconds') ? '/until' : '/seconds',
        message: has('seconds') ? 'cannot be given with `seconds`: give one' : 'or `until` is required',
      });
    else if (has('until') && !config.until!.includes('{{') && Number.isNaN(Date.parse(config.until!)))
      errors.push({ field: '/until', message: 'is not an ISO-8601 time (e.g. 2026-01-31T09:00:00Z)' });
    return errors;
  },
  async run(config, { input, resume }) {
    // Parked and now resumed: the wait is over.
    if (resume) return { output: input };
    const now = Date.now();
    let at: number;
    if (config.seconds !== undefined) {
      at = now + config.seconds * 1000;
    } else {
      const text = String(config.until);
      at = Date.parse(text);
      if (Number.isNaN(at))
        throw new StepFailure(
          `The time ${JSON.stringify(text.slice(0, 100))} is not an ISO-8601 time (e.g. 2026-01-31T09:00:00Z).`,
          {
            field: '/until',
          },
        );
    }
    if (at - now > MAX_WAIT_MS)
      throw new StepFailure(
        `A wait may last at most ${MAX_WAIT_DAYS} days; ${new Date(at).toISOString()} is further ahead.`,
        { field: config.seconds !== undefined ? '/seconds' : '/until' },
      );
    // Now or in the past: nothing to wait for.
    if (at <= now) return { output: input };
    return { output: input, park: { until: new Date(at), state: null } };
  },
});
