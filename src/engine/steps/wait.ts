/**
 * `wait`: pause the execution (SPEC 7b, 7g). The step parks the run (StepOutcome.park): the
 * execution is `waiting`, holds no executor slot, and the queue resumes it on any executor.
 *
 * - `for: "time"` (the default): for `seconds`, or until the time `until` (ISO-8601, usually an
 *   expression), at most MAX_WAIT_DAYS ahead; then outputs its input. A time in the past, or 0
 *   seconds, does not wait.
 * - `for: "call"`: until the execution's resume URL (`$execution.resumeUrl`, engine/resume-url.ts)
 *   is called; outputs that call's trigger item.
 * - `for: "event"`: until a production request accepted by the webhook workflow `workflowId`
 *   gives, through the template `match` (evaluated against that request's item), the value of
 *   `equals` (rendered here, in this run); outputs that request's item.
 *
 * A call or an event wait gives up after `timeoutSeconds` (default 86 400) and outputs
 * `{"timedOut": true}`. It is registered in the store by the executor's service (WaitRequest,
 * executions/waits.ts), which resumes it: the call or the matching request makes the execution due
 * at once. Besides, the parked step looks again after a pause that doubles from 1 s to an hour:
 * that covers a resume that came between the registration and the park being recorded, and an
 * event the store's match could not see (executions/waits.ts says when).
 */
import Type from 'typebox';
import type { FieldError } from '../../errors.js';
import { keyText } from '../concurrency.js';
import { compileTemplate } from '../expressions.js';
import type { WaitState } from '../services.js';
import { ServiceRefusal } from '../services.js';
import { defineStep, Expr, StepFailure } from './types.js';

export const MAX_WAIT_DAYS = 30;
const MAX_WAIT_MS = MAX_WAIT_DAYS * 86_400_000;
/** A call or event wait's `timeoutSeconds` when none is given: a day. */
export const DEFAULT_TIMEOUT_SECONDS = 86_400;

/** The parked step's first look after 1 s, then doubling, up to an hour between looks. */
const FIRST_LOOK_MS = 1_000;
const MAX_LOOK_MS = 3_600_000;

const TIME_FIELDS = ['seconds', 'until'] as const;
const CALL_FIELDS = ['timeoutSeconds'] as const;
const EVENT_FIELDS = ['timeoutSeconds', 'workflowId', 'match', 'equals'] as const;

interface Parked {
  looks: number;
}

export const waitStep = defineStep({
  type: 'wait',
  description:
    'Pause the execution for a time (at most 30 days), until its resume URL is called, or until another webhook workflow receives a matching event.',
  config: Type.Object(
    {
      for: Type.Optional(Type.Union([Type.Literal('time'), Type.Literal('call'), Type.Literal('event')])),
      seconds: Type.Optional(Expr(Type.Number({ minimum: 0, maximum: MAX_WAIT_MS / 1000 }))),
      until: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
      timeoutSeconds: Type.Optional(Expr(Type.Number({ minimum: 1, maximum: MAX_WAIT_MS / 1000 }))),
      workflowId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      match: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
      equals: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: false },
  ),
  // Evaluated against the other workflow's requests (executions/waits.ts), never in this run.
  literal: ['match'],
  check(config) {
    const errors: FieldError[] = [];
    const has = (k: string) => Object.hasOwn(config, k);
    const kind = config.for ?? 'time';
    const allowed: readonly string[] =
      kind === 'time' ? TIME_FIELDS : kind === 'call' ? CALL_FIELDS : EVENT_FIELDS;
    for (const field of [...TIME_FIELDS, ...EVENT_FIELDS])
      if (has(field) && !allowed.includes(field))
        errors.push({
          field: `/${field}`,
          message: `is not a field of a wait for ${kind === 'time' ? 'a time' : `a ${kind}`}`,
        });
    if (kind === 'time') {
      if (has('seconds') === has('until'))
        errors.push({
          field: has('seconds') ? '/until' : '/seconds',
          message: has('seconds') ? 'cannot be given with `seconds`: give one' : 'or `until` is required',
        });
      else if (has('until') && !config.until!.includes('{{') && Number.isNaN(Date.parse(config.until!)))
        errors.push({ field: '/until', message: 'is not an ISO-8601 time (e.g. 2026-01-31T09:00:00Z)' });
    }
    if (kind === 'event') {
      if (!has('workflowId'))
        errors.push({
          field: '/workflowId',
          message: 'is required: the webhook workflow whose requests are matched',
        });
      if (!has('match'))
        errors.push({
          field: '/match',
          message: 'is required: an expression on that workflow’s request, e.g. {{ body.data.object.id }}',
        });
      else if (!config.match!.includes('{{'))
        errors.push({
          field: '/match',
          message: 'must be an expression on that workflow’s request, e.g. {{ body.data.object.id }}',
        });
      else
        for (const e of compileTemplate(config.match, '/match').errors)
          errors.push({ field: '/match', message: e.message });
      if (!has('equals') || config.equals === null || config.equals === '')
        errors.push({
          field: '/equals',
          message: 'is required: the value `match` must give, e.g. {{ $trigger.body.id }}',
        });
    }
    return errors;
  },
  async run(config, { input, resume, services, scope, step, indices }) {
    const kind = config.for ?? 'time';
    if (kind === 'time') return waitForTime(config, input, resume !== undefined);
    if (!services || !scope || !step)
      throw new StepFailure(
        'A wait for a call or an event cannot run here (this engine runs without the executor).',
      );
    const key = kind === 'event' ? keyText(config.equals) : undefined;
    if (kind === 'event' && key === undefined)
      throw new StepFailure('`equals` gave nothing to wait for (null, empty or missing).', {
        field: '/equals',
      });
    const timeoutMs = (config.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
    const details = kind === 'call' ? { for: 'call' } : { for: 'event', workflowId: config.workflowId, key };
    let state: WaitState;
    try {
      state = await services.waitFor({
        executionId: scope.execution.id,
        step,
        indices: indices ?? [],
        kind,
        ...(kind === 'event' ? { workflowId: config.workflowId!, match: config.match!, key: key! } : {}),
        expiresAt: new Date(Date.now() + timeoutMs).toISOString(),
      });
    } catch (err) {
      if (err instanceof ServiceRefusal) throw new StepFailure(err.message, { details });
      throw err;
    }
    if (state.status === 'resumed') return { output: state.item, details };
    if (state.status === 'timedOut') return { output: { timedOut: true }, details };
    const looks = ((resume?.state as Parked | undefined)?.looks ?? 0) + 1;
    const pause = Math.min(FIRST_LOOK_MS * 2 ** (looks - 1), MAX_LOOK_MS);
    const until = Math.min(Date.now() + pause, Date.parse(state.expiresAt));
    return { output: null, details, park: { until: new Date(until), state: { looks } satisfies Parked } };
  },
});

function waitForTime(
  config: { seconds?: number | undefined; until?: string | undefined },
  input: unknown,
  resumed: boolean,
) {
  // Parked and now resumed: the wait is over.
  if (resumed) return { output: input };
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
        { field: '/until' },
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
}
