/**
 * Durable acceptance with group commit. Every accepted webhook request is written (trigger item,
 * blobs, queued execution) inside a store transaction before its response is sent. Requests that
 * arrive while a commit is in flight wait and are written together in the next transaction
 * (store/group-commit.ts, shared with the executor's results), so under load one fsync covers
 * many requests instead of one each; with no load, a request commits alone at once.
 *
 * Hand-off: when this process runs an executor with room (`LocalExecutor`), an execution is
 * inserted already claimed by it (`running`, locked to its worker id under a lease) and handed to
 * it after the commit with the trigger item still in memory. That saves the executor's claim (an
 * UPDATE … RETURNING and a JSON.parse of the item per execution) and the wake-up notice. A crash
 * loses nothing: a `running` row of a dead process is claimed again (lease lapse, or at once on
 * the next embedded start), exactly like one claimed the ordinary way.
 *
 * A workflow of pure steps (no network) is even run before the commit, while the executor keeps
 * up, and its execution stored finished (queue/pure-run.ts): one row write per request. On SQLite
 * the writer thread runs it, off the event loop, just before it inserts the row.
 *
 * When more than `maxPending` requests are waiting, new ones are refused with 503 `overloaded`
 * rather than accepted without being stored.
 */
import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import { isoString } from '../ids.js';
import type { Bus } from '../bus/bus.js';
import type { GroupCommit } from '../store/group-commit.js';
import type { Database, ExecutionRow, NewExecutionRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import type { Workflow } from '../workflows/model.js';

export type IngestWrite = (trx: Transaction<Database>) => Promise<void>;

export interface IngestJob {
  /** The workflow version the execution is for. */
  workflow: Workflow;
  /** The execution to insert, `queued` (ingest may insert it claimed or finished, see above). */
  execution: NewExecutionRow;
  /** What `execution.trigger` is the JSON of: handed to the local executor as is. */
  item: unknown;
  /** The request's other writes (idempotency key, blobs, test capture), in the same transaction. */
  write?: IngestWrite;
}

/** An executor in this process that takes committed executions without claiming them. */
export interface LocalExecutor {
  readonly workerId: string;
  readonly leaseMs: number;
  /** Room for one more execution of `bytes` of trigger JSON; false sends it through the queue. */
  reserve(bytes: number): boolean;
  /** A reservation that was not used (its transaction rolled back). */
  release(bytes: number): void;
  /** A committed execution, claimed by this executor, and its trigger item. */
  adopt(row: ExecutionRow, item: unknown): void;
  /** Whether a side-effect-free workflow may run before the commit: by the store, here, or not. */
  beforeCommit(workflow: Workflow): 'store' | 'here' | undefined;
  /** Run it now and fill `row` in finished. */
  runBeforeCommit(workflow: Workflow, row: NewExecutionRow, item: unknown): Promise<void>;
  /** A row run before its commit is committed, finished: announce it. */
  announce(row: NewExecutionRow): void;
}

export class Ingest {
  readonly #store: Store;
  readonly #writer: GroupCommit;
  readonly #bus: Bus;
  readonly #log: Logger;
  readonly #maxPending: number;
  #executor: LocalExecutor | undefined;
  #pending = 0;
  #wakeUp = false;
  #closed = false;

  constructor({
    store,
    writer,
    bus,
    log,
    maxPending,
  }: { store: Store; writer: GroupCommit; bus: Bus; log: Logger; maxPending: number }) {
    this.#store = store;
    this.#writer = writer;
    this.#bus = bus;
    this.#log = log;
    this.#maxPending = maxPending;
  }

  /** Requests waiting for their commit. */
  get pending(): number {
    return this.#pending;
  }

  /** Hand committed executions to this process's executor (when it runs one). */
  handOffTo(executor: LocalExecutor): void {
    this.#executor = executor;
  }

  /** Resolves once the job is committed; rejects (and nothing is kept) when it could not be. */
  async commit(job: IngestJob): Promise<void> {
    if (this.#closed) {
      throw new AppError('overloaded', 'The server is shutting down and accepts no new requests.', {
        hint: 'Retry in a few seconds; another instance or the restarted one will take it.',
        headers: { 'retry-after': '5' },
      });
    }
    if (this.#pending >= this.#maxPending) {
      throw new AppError(
        'overloaded',
        'Too many requests are waiting to be stored; this one was not accepted.',
        {
          hint: 'Retry after the number of seconds in Retry-After.',
          headers: { 'retry-after': '1' },
        },
      );
    }
    const executor = this.#executor;
    const row = job.execution;
    let claimed = false;
    this.#pending++;
    try {
      const write = job.write;
      // The store runs it only with the plain insert; with other writes it runs here.
      let before = executor?.beforeCommit(job.workflow);
      if (before === 'store' && write) before = 'here';
      if (before === 'here') await executor!.runBeforeCommit(job.workflow, row, job.item);
      else if (before === undefined && executor) {
        claimed = executor.reserve(row.trigger.length);
        if (claimed) claim(row, executor);
      }
      if (write) {
        await this.#writer.run(async (trx) => {
          await write(trx);
          await this.#store.hot.insertExecution(trx, row);
        });
      } else await this.#writer.hot({ kind: 'insert', row, runPure: before === 'store' });
    } catch (err) {
      if (claimed) {
        executor!.release(row.trigger.length);
        unclaim(row);
      }
      throw err;
    } finally {
      this.#pending--;
    }
    // A row the store was to run may have gone in unrun (its writer thread stopped): queued.
    if (row.status !== 'queued' && row.status !== 'running') executor!.announce(row);
    else if (claimed) executor!.adopt(row as ExecutionRow, job.item);
    else this.#wake();
  }

  /** One `execution.queued` notice for all the rows a commit left queued. */
  #wake(): void {
    if (this.#wakeUp) return;
    this.#wakeUp = true;
    queueMicrotask(() => {
      this.#wakeUp = false;
      this.#bus.publish('execution.queued', {}).catch((err) => this.#log.error({ err }, 'wake-up failed'));
    });
  }

  /** Stop taking new jobs and wait for the accepted ones to commit. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#pending > 0) {
      await this.#writer.idle();
      await new Promise((r) => setImmediate(r));
    }
  }
}

/** Marks a row as claimed by the local executor, as `Queue.claim` would. */
function claim(row: NewExecutionRow, executor: LocalExecutor): void {
  const now = Date.now();
  row.status = 'running';
  row.locked_by = executor.workerId;
  row.locked_until = isoString(new Date(now + executor.leaseMs));
  row.started_at = isoString(new Date(now));
}

/** Undoes `claim` when its transaction rolled back. */
function unclaim(row: NewExecutionRow): void {
  row.status = 'queued';
  row.locked_by = null;
  row.locked_until = null;
  row.started_at = null;
}
