/**
 * Synchronous response modes (SPEC 5): a webhook call whose answer depends on the execution waits
 * for its `execution.finished` notice, then answers from the stored result; in `respondStep` mode an
 * `execution.responded` notice answers it as soon as the `respond` step has run, as n8n's "Respond to
 * Webhook" does, while the rest of the execution goes on. One bus subscription per notice serves
 * every waiting request (a map lookup per execution). respond.ts turns what was waited for into the
 * answer.
 */
import type { Bus, StepResponse } from '../bus/bus.js';
import { executionsRepo } from '../store/executions.js';
import type { Store } from '../store/store.js';

/** true: the execution finished; false: timed out; a response: its `respond` step ran (respondStep). */
export type WaitResult = boolean | StepResponse;

export interface Waiting {
  promise: Promise<WaitResult>;
  cancel(): void;
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
      const finished = await executionsRepo.finishedAmong(this.#store.db, ids.slice(i, i + 1_000));
      for (const id of finished) this.#waiting.get(id)?.(true);
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

  close(): void {
    this.#unsubscribe();
    for (const done of this.#waiting.values()) done(false);
  }
}
