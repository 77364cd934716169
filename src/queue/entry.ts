/**
 * The one way a new execution reaches an executor: ingest offers it with the function
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
import type { Engine } from '../engine/run.js';
import type { Finished } from './finished.js';
import { runPure } from './pure-run.js';

export type Offered = 'ran' | 'claimed' | 'queued';

export interface Offer {
  /** The workflow version the execution is for. */
  workflow: Workflow;
  /** The execution, `queued`; the entry may fill it in claimed or finished before `write`. */
  row: NewExecutionRow;
  /** What `row.trigger` is the JSON of. */
  item: unknown;
  /**
   * Stores `row` — the offered one, or a new value made from it (claimed by this worker) — with
   * the request's other writes, and resolves once committed.
   */
  write(row: NewExecutionRow): Promise<unknown>;
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

/**
 * The entry of a process without an executor (`hookflow webhook`): every execution is stored
 * queued for the workers, except that a pure workflow (`Engine.runsBeforeCommit`) runs here before
 * its commit, as in `hookflow start`, and is stored finished. Nobody outside can tell where it ran
 * (it has no effect, and until the commit nothing happened), and it saves what a worker would
 * spend on it: a batch's lock, the run and the row's second write, and the `execution.queued`
 * notice (on PostgreSQL those held `hookflow webhook` at ~0.5× of what PostgreSQL takes). Unlike
 * the executor's entry it does not wait for a backlog to drain first: pure runs have no order
 * anyone can observe, and the workers' backlog is not known here.
 */
export class QueueEntry implements ExecutionEntry {
  readonly #notice: QueuedNotice;
  readonly #before: { engine: Engine; finished: Finished } | undefined;

  constructor(notice: QueuedNotice, before?: { engine: Engine; finished: Finished }) {
    this.#notice = notice;
    this.#before = before;
  }

  async offer({ workflow, row, item, write }: Offer): Promise<Offered> {
    const before = this.#before;
    if (
      row.concurrency_key == null &&
      before?.engine.runsBeforeCommit(workflow) &&
      (await runPure(before.engine, workflow, row, item, (err) =>
        before.finished.crashed(err, row.id, workflow.id),
      ))
    ) {
      await write(row);
      before.finished.announce(row, { here: true });
      return 'ran';
    }
    await write(row);
    this.#notice.send();
    return 'queued';
  }
}
