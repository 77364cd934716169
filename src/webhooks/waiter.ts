/**
 * Synchronous response modes (SPEC 5): a webhook call whose answer depends on the execution waits
 * for its `execution.finished` notice, then answers from the stored result; in `respondStep` mode an
 * `execution.responded` notice answers it as soon as the `respond` step has run, as n8n's "Respond to
 * Webhook" does, while the rest of the execution goes on. One bus subscription per notice serves
 * every waiting request (a map lookup per execution).
 */
import { AppError } from '../errors.js';
import type { Bus, StepResponse } from '../queue/bus.js';
import { executionsRepo } from '../store/executions.js';
import type { Store } from '../store/store.js';
import type { Outcome } from './receive.js';

/** true: the execution finished; false: timed out; a response: its `respond` step ran (respondStep). */
export type WaitResult = boolean | StepResponse;

export interface Waiting {
  promise: Promise<WaitResult>;
  cancel(): void;
}

interface StepRecord {
  type: string;
  status: string;
  output: unknown;
}

export class ExecutionWaiter {
  readonly #store: Store;
  readonly #waiting = new Map<string, (result: WaitResult) => void>();
  readonly #unsubscribe: () => void;

  constructor({ store, bus }: { store: Store; bus: Bus }) {
    this.#store = store;
    const unsubscribe = [
      bus.subscribe('execution.finished', ({ executionId }) => {
        this.#waiting.get(executionId)?.(true);
      }),
      bus.subscribe('execution.responded', ({ executionId, response }) => {
        this.#waiting.get(executionId)?.(response);
      }),
      // The cross-process bus reconnected: completions announced meanwhile were missed here.
      bus.subscribe('bus.resynced', () => this.#recheck()),
    ];
    this.#unsubscribe = () => {
      for (const u of unsubscribe) u();
    };
  }

  /** Look the waiting executions up and release those that finished. */
  async #recheck(): Promise<void> {
    const ids = [...this.#waiting.keys()];
    for (let i = 0; i < ids.length; i += 1_000) {
      const rows = await this.#store.db
        .selectFrom('executions')
        .select('id')
        .where('id', 'in', ids.slice(i, i + 1_000))
        .where('status', 'not in', ['queued', 'running'])
        .execute();
      for (const row of rows) this.#waiting.get(row.id)?.(true);
    }
  }

  wait(executionId: string, timeoutMs: number): Waiting {
    let timer: NodeJS.Timeout | undefined;
    const promise = new Promise<WaitResult>((resolve) => {
      const done = (result: WaitResult) => {
        clearTimeout(timer);
        this.#waiting.delete(executionId);
        resolve(result);
      };
      timer = setTimeout(() => done(false), timeoutMs);
      this.#waiting.set(executionId, done);
    });
    return {
      promise,
      cancel: () => {
        clearTimeout(timer);
        this.#waiting.delete(executionId);
      },
    };
  }

  async respond(
    result: WaitResult,
    executionId: string,
    mode: 'lastStep' | 'respondStep',
    headers: Record<string, string>,
  ): Promise<Outcome> {
    if (typeof result === 'object') return respondStepOutcome(result, executionId, headers);
    const row = result ? await executionsRepo.get(this.#store.db, executionId) : undefined;
    if (!row || row.status === 'queued' || row.status === 'running') {
      throw new AppError('execution_timeout', 'The workflow did not finish in time; it goes on running.', {
        executionId,
        headers,
        hint: 'Look the execution up with GET /api/v1/executions/{executionId}, or raise trigger.response.timeoutMs.',
      });
    }
    const steps = JSON.parse(row.steps) as StepRecord[];
    // A respond step that ran is the answer, even if a later step failed: the early answer
    // (`execution.responded`) would have been it, and both paths must agree.
    const respond =
      mode === 'respondStep'
        ? steps.find((s) => s.type === 'respond' && s.status === 'succeeded')
        : undefined;
    if (respond) return respondStepOutcome(respond.output as Partial<StepResponse>, executionId, headers);
    if (row.status === 'failed') throw executionFailed(executionId, headers);
    if (mode === 'respondStep') {
      return {
        status: 200,
        headers,
        body: { message: 'Workflow finished without a respond step', executionId },
        executionId,
      };
    }
    const last = steps.length > 0 ? steps[steps.length - 1]!.output : JSON.parse(row.trigger);
    return { status: 200, headers, body: last ?? {}, executionId };
  }

  close(): void {
    this.#unsubscribe();
    for (const done of this.#waiting.values()) done(false);
  }
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
