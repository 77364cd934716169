/**
 * Durable acceptance with group commit. Every accepted webhook request is written (trigger item,
 * blobs, queued execution) inside a store transaction before its response is sent. Requests that
 * arrive while a commit is in flight wait and are written together in the next transaction, so
 * under load one fsync covers many requests instead of one each; with no load, a request commits
 * alone at once (no timer: the batch is whatever queued up during the previous commit).
 *
 * When more than `maxPending` requests are waiting, new ones are refused with 503 `overloaded`
 * rather than accepted without being stored.
 */
import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { Bus } from '../queue/bus.js';
import type { Database } from '../store/schema.js';
import type { Store } from '../store/store.js';

export type IngestWrite = (trx: Transaction<Database>) => Promise<void>;

interface Job {
  write: IngestWrite;
  resolve: () => void;
  reject: (err: unknown) => void;
}

// Big enough to amortise the fsync (a few ms) over many requests, small enough that one
// transaction stays short and a failure retries few jobs one by one.
const MAX_BATCH = 512;

export class Ingest {
  readonly #store: Store;
  readonly #bus: Bus;
  readonly #log: Logger;
  readonly #maxPending: number;
  #queue: Job[] = [];
  #flushing = false;
  #closed = false;

  constructor({ store, bus, log, maxPending }: { store: Store; bus: Bus; log: Logger; maxPending: number }) {
    this.#store = store;
    this.#bus = bus;
    this.#log = log;
    this.#maxPending = maxPending;
  }

  get pending(): number {
    return this.#queue.length;
  }

  /** Resolves once `write` is committed; rejects (and nothing is kept) when it could not be. */
  commit(write: IngestWrite): Promise<void> {
    if (this.#closed) {
      return Promise.reject(
        new AppError('overloaded', 'The server is shutting down and accepts no new requests.', {
          hint: 'Retry in a few seconds; another instance or the restarted one will take it.',
          headers: { 'retry-after': '5' },
        }),
      );
    }
    if (this.#queue.length >= this.#maxPending) {
      return Promise.reject(
        new AppError('overloaded', 'Too many requests are waiting to be stored; this one was not accepted.', {
          hint: 'Retry after the number of seconds in Retry-After.',
          headers: { 'retry-after': '1' },
        }),
      );
    }
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ write, resolve, reject });
      if (!this.#flushing) {
        // Start after the current I/O phase, not now: SQLite's driver is synchronous, so a commit
        // started here would block the event loop and no other request could join it (every batch
        // was one job: 200 concurrent requests made 200 fsyncs). setImmediate is no timer: an idle
        // request still commits at once, and every request read in the same phase joins the batch.
        this.#flushing = true;
        setImmediate(() => void this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH);
        await this.#commitBatch(batch);
        void this.#bus
          .publish('execution.queued', {})
          .catch((err) => this.#log.error({ err }, 'wake-up failed'));
      }
    } finally {
      this.#flushing = false;
    }
  }

  async #commitBatch(batch: Job[]): Promise<void> {
    try {
      await this.#store.transaction(async (trx) => {
        for (const job of batch) await job.write(trx);
      });
      for (const job of batch) job.resolve();
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
      // One bad job must not fail its neighbours: retry each alone.
      this.#log.warn({ err, size: batch.length }, 'group commit failed; retrying jobs one by one');
      for (const job of batch) await this.#commitBatch([job]);
    }
  }

  /** Stop taking new jobs and wait for the queued ones to commit. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#flushing || this.#queue.length > 0) {
      if (!this.#flushing) void this.#flush();
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}
