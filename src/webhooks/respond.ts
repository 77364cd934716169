/**
 * Response modes (SPEC 5): what the caller of a webhook is answered. `immediately` answers at once
 * from the trigger's settings; `lastStep` and `respondStep` answer from the execution once the
 * waiter (waiter.ts) says it finished, timed out, or its `respond` step ran.
 */
import { AppError } from '../errors.js';
import type { StepResponse } from '../bus/bus.js';
import { executionsRepo, isFinished } from '../store/executions.js';
import { findRecord, type RecordLike } from '../engine/records.js';
import { isOmitted, type Omitted } from '../model/record-json.js';
import type { Db } from '../store/store.js';
import type { WebhookTrigger } from '../model/workflow.js';
import type { Waiting, WaitResult } from './waiter.js';

export interface Outcome {
  status: number;
  headers: Record<string, string>;
  /** JSON-serialisable value, a Buffer, or undefined for no body. */
  body: unknown;
  executionId?: string;
  /**
   * The body is hookflow's own fixed message (`{"message","executionId"}`), nothing the owner or
   * the request wrote: it is answered with the strictest sandbox (receive.ts picks it, http/routes/webhooks.ts
   * spells it).
   */
  own?: boolean;
  /** A provider's URL check answered without an execution (handshake.ts): counted in /metrics. */
  handshake?: string;
}

/** The answer of response mode `immediately` (SPEC 5). */
export function immediateOutcome(
  trigger: WebhookTrigger,
  executionId: string,
  headers: Record<string, string>,
): Outcome {
  const r = trigger.response;
  if (r.noContent) return { status: 204, headers, body: undefined, executionId };
  return {
    status: r.status ?? 200,
    headers,
    body: r.body !== undefined ? r.body : { message: 'Workflow was started', executionId },
    executionId,
    own: r.body === undefined,
  };
}

/**
 * A committed call of mode `lastStep` or `respondStep` whose answer is still to come: the HTTP
 * layer gives back the call's place among requests in progress, then awaits `answer()` (the wait
 * holds one of the waiter's own places). It keeps only what the answer needs, not the request.
 */
export class PendingOutcome {
  readonly #db: Db;
  readonly #waiting: Waiting;
  readonly #mode: 'lastStep' | 'respondStep';
  readonly #headers: Record<string, string>;

  constructor(
    db: Db,
    waiting: Waiting,
    readonly executionId: string,
    mode: 'lastStep' | 'respondStep',
    headers: Record<string, string>,
  ) {
    this.#db = db;
    this.#waiting = waiting;
    this.#mode = mode;
    this.#headers = headers;
  }

  /** The answer once the execution finished, its respond step ran, or the wait timed out (504). */
  async answer(): Promise<Outcome> {
    const result = await this.#waiting.promise;
    return waitedOutcome(this.#db, result, this.executionId, this.#mode, this.#headers);
  }

  /** The caller went away: stop waiting for it (answer() then settles as timed out). */
  abandon(): void {
    this.#waiting.cancel();
  }
}

interface StepRecord extends RecordLike {
  output: unknown;
}

/**
 * The answer of modes `lastStep` and `respondStep` once the waiter has a result: the `respond`
 * step's answer, the last step's output, or an error (timed out, failed). Reads the execution row.
 */
export async function waitedOutcome(
  db: Db,
  result: WaitResult,
  executionId: string,
  mode: 'lastStep' | 'respondStep',
  headers: Record<string, string>,
): Promise<Outcome> {
  if (typeof result === 'object') return respondStepOutcome(result, executionId, headers);
  const row = result ? await executionsRepo.get(db, executionId) : undefined;
  // Not finished (still queued or running, or waiting for its resume time): the caller gets 504
  // and the execution goes on.
  if (!row || !isFinished(row.status)) {
    throw new AppError('execution_timeout', 'The workflow did not finish in time; it goes on running.', {
      executionId,
      headers,
      hint: 'Look the execution up with GET /api/v1/executions/{executionId}, or raise trigger.response.timeoutMs.',
    });
  }
  const steps = JSON.parse(row.steps) as StepRecord[];
  // A respond step that ran is the answer, even if a later step failed: the early answer
  // (`execution.responded`) would have been it, and both paths must agree. The first that ran,
  // nested ones included (a respond in an if branch or a forEach: SPEC 7b).
  const respond =
    mode === 'respondStep'
      ? findRecord(steps, (s) => s.type === 'respond' && s.status === 'succeeded')
      : undefined;
  if (respond) {
    if (isOmitted(respond.output)) throw outputTooLarge(respond.output, executionId, headers);
    return respondStepOutcome(respond.output as Partial<StepResponse>, executionId, headers);
  }
  if (row.status === 'failed') throw executionFailed(executionId, headers);
  // Newest wins (SPEC 7d): nothing ran, and the sender's event was received; a 2xx that says so
  // rather than the sender's own item echoed back as if the workflow had run.
  if (row.status === 'skipped') {
    return {
      status: 200,
      headers,
      body: {
        message: 'Skipped: a newer event of the same concurrency key had already started; no step ran.',
        executionId,
        skipReason: row.skip_reason,
      },
      executionId,
      own: true,
    };
  }
  if (mode === 'respondStep') {
    return {
      status: 200,
      headers,
      body: { message: 'Workflow finished without a respond step', executionId },
      executionId,
      own: true,
    };
  }
  const last = steps.length > 0 ? steps[steps.length - 1]!.output : JSON.parse(row.trigger);
  if (isOmitted(last)) throw outputTooLarge(last, executionId, headers);
  return { status: 200, headers, body: last ?? {}, executionId };
}

/**
 * The answer was too big for the execution's record (HOOKFLOW_EXECUTION_RECORD_MAX_BYTES), which
 * kept only its size: the execution succeeded, but there is nothing to answer with.
 */
function outputTooLarge(omitted: Omitted, executionId: string, headers: Record<string, string>): AppError {
  const size = `${omitted.atLeast ? 'more than ' : ''}${omitted.bytes} bytes`;
  return new AppError(
    'output_too_large',
    `The workflow finished, but its answer (${size}) is larger than an execution's record keeps.`,
    {
      executionId,
      headers,
      hint: "The workflow's owner can end it with a step that outputs less, or raise HOOKFLOW_EXECUTION_RECORD_MAX_BYTES.",
    },
  );
}

/**
 * A failed execution, as its caller sees it: the id and nothing else. The caller may be anyone on
 * the internet, and a step's error is the owner's to read (the execution record keeps it): it can
 * hold an outbound URL whose path is a secret (a Slack incoming webhook), internal host names and
 * the addresses they resolve to, or request data an expression choked on. Not even the step's name:
 * it describes the owner's integration, and the execution id is all the owner needs to find it.
 */
function executionFailed(executionId: string, headers: Record<string, string>): AppError {
  return new AppError('execution_failed', 'The workflow failed.', {
    executionId,
    headers,
    hint: "The workflow's owner can see which step failed and why in this execution.",
  });
}

/** The answer a `respond` step set, with hookflow's own headers on top. */
function respondStepOutcome(
  r: Partial<StepResponse>,
  executionId: string,
  headers: Record<string, string>,
): Outcome {
  return { status: r.status ?? 200, headers: { ...r.headers, ...headers }, body: r.body, executionId };
}
