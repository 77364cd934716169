/**
 * Durable acceptance with group commit. Every accepted webhook request is written (trigger item,
 * blobs, queued execution) inside a store transaction before its response is sent. Requests that
 * arrive while a commit is in flight wait and are written together in the next transaction
 * (store/group-commit.ts, shared with the executor's results), so under load one fsync covers
 * many requests instead of one each; with no load, a request commits alone at once.
 *
 * Each execution is offered to the executor's one entry (queue/entry.ts, Worker.offer) with the
 * function that writes it: when this process runs an executor with room, it is inserted already
 * claimed by it and started after the commit with the trigger item still in memory (no claim
 * round trip, no JSON.parse of the item, no wake-up notice), or, for a workflow of pure steps, run
 * before the commit and stored finished (one row write per request). Otherwise it is stored
 * queued for any worker (QueueEntry in processes without an executor).
 *
 * When more than `maxPending` requests are waiting, new ones are refused with 503 `overloaded`
 * rather than accepted without being stored.
 */
import { AppError } from '../errors.js';
import type { ExecutionEntry } from '../queue/entry.js';
import type { GroupCommit, GroupWrite } from '../store/group-commit.js';
import { queueRepo } from '../store/queue.js';
import type { ExecutionFieldRow, NewExecutionRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import type { Workflow } from '../model/workflow.js';

/** A request's writes besides its execution, run in the transaction that inserts it. */
export type IngestWrite = GroupWrite<void>;

export interface IngestJob {
  /** The workflow version the execution is for. */
  workflow: Workflow;
  /** The execution to insert, `queued` (the entry may fill it in claimed or finished, see above). */
  execution: NewExecutionRow;
  /** What `execution.trigger` is the JSON of: handed to the local executor as is. */
  item: unknown;
  /** The request's other writes (idempotency key, blobs, test capture), in the same transaction. */
  write?: IngestWrite;
  /** The execution's searchable fields (store/execution-search.ts), inserted with it; most have none. */
  fields?: readonly ExecutionFieldRow[];
  /**
   * The HTTP layer's word that this request's sender is the only one (http/lone-sender.ts): an
   * execution with no other write is then committed on the event loop at once (GroupCommit.hot).
   */
  commitNow: boolean;
}

export class Ingest {
  readonly #store: Store;
  readonly #writer: GroupCommit;
  readonly #maxPending: number;
  #entry: ExecutionEntry;
  #pending = 0;
  #closed = false;

  constructor({
    store,
    writer,
    entry,
    maxPending,
  }: {
    store: Store;
    writer: GroupCommit;
    /** Where executions go (a process with an executor hands them to it: `handOffTo`). */
    entry: ExecutionEntry;
    maxPending: number;
  }) {
    this.#store = store;
    this.#writer = writer;
    this.#entry = entry;
    this.#maxPending = maxPending;
  }

  /** Requests waiting for their commit. */
  get pending(): number {
    return this.#pending;
  }

  /** Offer executions to this process's executor (when it runs one). */
  handOffTo(entry: ExecutionEntry): void {
    this.#entry = entry;
  }

  /**
   * Resolves once the job is committed; rejects (and nothing is kept) when it could not be. Not an
   * async function: the entry's promise is the answer, with no second one wrapped around it (each
   * level of async functions on the webhook path cost a microtask turn and a promise a request).
   */
  commit(job: IngestJob): Promise<unknown> {
    if (this.#closed) {
      return Promise.reject(
        new AppError('overloaded', 'The server is shutting down and accepts no new requests.', {
          hint: 'Retry in a few seconds; another instance or the restarted one will take it.',
          headers: { 'retry-after': '5' },
        }),
      );
    }
    if (this.#pending >= this.#maxPending) {
      return Promise.reject(
        new AppError('overloaded', 'Too many requests are waiting to be stored; this one was not accepted.', {
          hint: 'Retry after the number of seconds in Retry-After.',
          headers: { 'retry-after': '1' },
        }),
      );
    }
    const { workflow, execution: row, item, write, fields, commitNow } = job;
    this.#pending++;
    // An entry's offer is an async function: it rejects, never throws.
    const offered = this.#entry.offer({
      workflow,
      row,
      item,
      write: (stored) =>
        write || row.concurrency_key != null
          ? this.#writer.run(async (trx) => {
              await write?.(trx);
              await this.#store.hot.insertExecution(trx, stored, fields);
              // A concurrency key (SPEC 7d) is not a column of the hot insert: executions without
              // one, most, write what they wrote before.
              if (row.concurrency_key != null)
                await queueRepo.setConcurrency(trx, row.id, {
                  key: row.concurrency_key,
                  limit: row.concurrency_limit ?? 1,
                  newest: row.newest_value ?? null,
                });
            })
          : this.#writer.hot({ kind: 'insert', row: stored, ...(fields ? { fields } : {}) }, { commitNow }),
    });
    const settled = () => {
      this.#pending--;
    };
    offered.then(settled, settled);
    return offered;
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
