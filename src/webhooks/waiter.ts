/**
 * Synchronous response modes (SPEC 5): a webhook call whose answer depends on the execution waits
 * for its `execution.finished` notice, then answers from the stored result; in `respondStep` mode an
 * `execution.responded` notice answers it as soon as the `respond` step has run, as n8n's "Respond to
 * Webhook" does, while the rest of the execution goes on. One bus subscription per notice serves
 * every waiting request (a map lookup per execution). respond.ts turns what was waited for into the
 * answer.
 *
 * Callers waiting here hold no place among the webhook calls in progress (http/routes/webhooks.ts
 * gives it back once the call is committed): they are capped apart, by `maxWaiting`
 * (HOOKFLOW_MAX_WAITING_RESPONSES), so that callers parked on one slow workflow for up to its
 * `timeoutMs` cannot make every other webhook answer 503.
 */
import type { Bus, StepResponse } from '../bus/bus.js';
import { AppError } from '../errors.js';
import { executionsRepo } from '../store/executions.js';
import type { Store } from '../store/store.js';

/** true: the execution finished; false: timed out, or the wait was cancelled; a response: its `respond` step ran (respondStep). */
export type WaitResult = boolean | StepResponse;

export interface Waiting {
  promise: Promise<WaitResult>;
  /** Stop waiting (the promise, if awaited, resolves false) and give the place back; idempotent. */
  cancel(): void;
}

export class ExecutionWaiter {
  readonly #store: Store;
  readonly #maxWaiting: number;
  readonly #waiting = new Map<string, (result: WaitResult) => void>();
  /** Waits in progress (the map can hold fewer: two replays of one delivery share its key). */
  #count = 0;
  readonly #unsubscribe: () => void;

  constructor({ store, bus, maxWaiting }: { store: Store; bus: Bus; maxWaiting: number }) {
    this.#store = store;
    this.#maxWaiting = maxWaiting;
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

  /** Waits in progress. */
  get waiting(): number {
    return this.#count;
  }

  /** Look the waiting executions up and release those that finished. */
  async #recheck(): Promise<void> {
    const ids = [...this.#waiting.keys()];
    for (let i = 0; i < ids.length; i += 1_000) {
      const finished = await executionsRepo.finishedAmong(this.#store.db, ids.slice(i, i + 1_000));
      for (const id of finished) this.#waiting.get(id)?.(true);
    }
  }

  /**
   * Wait for the execution's end (or its respond step), at most `timeoutMs`. Throws 503
   * `overloaded` when `maxWaiting` callers are waiting already: the receiver asks before it commits
   * the request, so the refused caller can retry without sending anything twice.
   */
  wait(executionId: string, timeoutMs: number): Waiting {
    if (this.#count >= this.#maxWaiting) {
      throw new AppError(
        'overloaded',
        'Too many callers are waiting for their workflows to answer; this request was not accepted.',
        {
          hint: 'Retry after the number of seconds in Retry-After; nothing was stored or started.',
          headers: { 'retry-after': '1' },
        },
      );
    }
    this.#count++;
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    let done!: (result: WaitResult) => void;
    const promise = new Promise<WaitResult>((resolve) => {
      done = (result: WaitResult) => {
        if (settled) return;
        settled = true;
        this.#count--;
        clearTimeout(timer);
        if (this.#waiting.get(executionId) === done) this.#waiting.delete(executionId);
        resolve(result);
      };
    });
    timer = setTimeout(() => done(false), timeoutMs);
    this.#waiting.set(executionId, done);
    return { promise, cancel: () => done(false) };
  }

  close(): void {
    this.#unsubscribe();
    for (const done of this.#waiting.values()) done(false);
  }
}
