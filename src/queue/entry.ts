/**
 * The one way a new execution reaches an executor (issue 16): ingest offers it with the function
 * that stores it, and the executor decides, in one place (Worker.offer), how it runs:
 * - 'ran': a pure workflow run before its commit and stored finished (queue/pure-run.ts);
 * - 'claimed': stored claimed by this process's executor, which runs it now without a claim
 *   round trip (the trigger item still in memory);
 * - 'queued': stored queued, for whichever worker claims it (Queue.claim): when this process has
 *   no executor or its executor is busy.
 * Everything an executor runs after that (claimed from the queue, handed over, recovered after a
 * crash, resumed after a wait) goes through the same Worker run: a row and, when it waited, its
 * checkpoint.
 */
import type { Logger } from 'pino';
import type { NewExecutionRow } from '../store/schema.js';
import type { Workflow } from '../model/workflow.js';
import type { Bus } from '../bus/bus.js';

export type Offered = 'ran' | 'claimed' | 'queued';

export interface Offer {
  /** The workflow version the execution is for. */
  workflow: Workflow;
  /** The execution, `queued`; the entry may fill it in claimed or finished before `write`. */
  row: NewExecutionRow;
  /** What `row.trigger` is the JSON of. */
  item: unknown;
  /** Stores the row (with the request's other writes) and resolves once committed. */
  write(): Promise<unknown>;
}

export interface ExecutionEntry {
  /** Resolves once the execution is committed, with what became of it; rejects when it could not be. */
  offer(offer: Offer): Promise<Offered>;
}

/** One `execution.queued` notice for all the rows stored queued in one turn of the event loop. */
export class QueuedNotice {
  readonly #bus: Bus;
  readonly #log: Logger;
  #pending = false;

  constructor({ bus, log }: { bus: Bus; log: Logger }) {
    this.#bus = bus;
    this.#log = log;
  }

  send(): void {
    if (this.#pending) return;
    this.#pending = true;
    queueMicrotask(() => {
      this.#pending = false;
      this.#bus.publish('execution.queued', {}).catch((err) => this.#log.error({ err }, 'wake-up failed'));
    });
  }
}

/** The entry of a process without an executor (`hookflow webhook`): every execution is queued. */
export class QueueEntry implements ExecutionEntry {
  readonly #notice: QueuedNotice;

  constructor(notice: QueuedNotice) {
    this.#notice = notice;
  }

  async offer({ write }: Offer): Promise<Offered> {
    await write();
    this.#notice.send();
    return 'queued';
  }
}
