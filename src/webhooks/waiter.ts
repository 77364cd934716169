/**
 * Synchronous response modes (SPEC 5): a webhook call whose answer depends on the execution waits
 * for its `execution.finished` notice, then answers from the stored result. One bus subscription
 * serves every waiting request (a map lookup per finished execution).
 */
import { AppError } from '../errors.js';
import type { Bus } from '../queue/bus.js';
import { executionsRepo } from '../store/executions.js';
import type { Store } from '../store/store.js';
import type { Outcome } from './receive.js';

export interface Waiting {
  /** Resolves true when the execution finished, false on timeout. */
  promise: Promise<boolean>;
  cancel(): void;
}

interface StepRecord {
  type: string;
  status: string;
  output: unknown;
}

export class ExecutionWaiter {
  readonly #store: Store;
  readonly #waiting = new Map<string, (finished: boolean) => void>();
  readonly #unsubscribe: () => void;

  constructor({ store, bus }: { store: Store; bus: Bus }) {
    this.#store = store;
    const unsubscribe = [
      bus.subscribe('execution.finished', ({ executionId }) => {
        this.#waiting.get(executionId)?.(true);
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
    const promise = new Promise<boolean>((resolve) => {
      const done = (finished: boolean) => {
        clearTimeout(timer);
        this.#waiting.delete(executionId);
        resolve(finished);
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
    finished: boolean,
    executionId: string,
    mode: 'lastStep' | 'respondStep',
    headers: Record<string, string>,
  ): Promise<Outcome> {
    const row = finished ? await executionsRepo.get(this.#store.db, executionId) : undefined;
    if (!row || row.status === 'queued' || row.status === 'running') {
      throw new AppError('execution_timeout', 'The workflow did not finish in time; it goes on running.', {
        executionId,
        headers,
        hint: 'Look the execution up with GET /api/v1/executions/{executionId}, or raise trigger.response.timeoutMs.',
      });
    }
    if (row.status === 'failed') {
      const error = row.error ? (JSON.parse(row.error) as { message?: string; step?: string }) : {};
      throw new AppError(
        'execution_failed',
        `The workflow failed${error.step ? ` in step "${error.step}"` : ''}: ${error.message ?? 'unknown error'}`,
        { executionId, headers, hint: "Open the execution to see each step's input, output and error." },
      );
    }
    const steps = JSON.parse(row.steps) as StepRecord[];
    if (mode === 'respondStep') {
      const respond = steps.find((s) => s.type === 'respond' && s.status === 'succeeded');
      if (respond) {
        const r = respond.output as { status?: number; headers?: Record<string, string>; body?: unknown };
        return { status: r.status ?? 200, headers: { ...r.headers, ...headers }, body: r.body, executionId };
      }
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
