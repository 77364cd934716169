/**
 * Group commit: writes requested while a transaction is being committed wait and are committed
 * together in the next one, so under load one commit (and one fsync) covers many writes; with no
 * load a write commits alone at once (no timer: the batch is whatever queued up during the
 * previous commit). Ingest (accepted webhook requests) and the queue (execution results) share
 * one GroupCommit, so a busy process makes one transaction per cycle, not one per kind of write:
 * rows inserted by ingest and finished by the executor are written to the WAL once per cycle
 * instead of once per transaction (2.2 → 1.4 page writes per request at 10 000 req/s).
 *
 * A failing batch is retried one write at a time, so one bad write fails alone. Not when the store
 * itself cannot take writes (unavailable.ts: disk full, database unreachable…): then every write of
 * the batch fails at once with 503 `store_unavailable` (retrying each would only fail each again,
 * one transaction at a time, while the next batches wait), the outage is reported to `health`
 * (logged once, /readyz 503), and the next batch is tried as usual: the first that commits ends it.
 */
import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { MaybePromise } from '../shared/maybe-promise.js';
import type { StoreHealth } from './health.js';
import type { Database } from './schema.js';
import type { HotWrite, Store } from './store.js';
import { isStoreUnavailable, storeUnavailable } from './unavailable.js';

export type GroupWrite<T> = (trx: Transaction<Database>) => MaybePromise<T>;

/** A callback run inside the transaction, or a hot write given as data (store.writeHot). */
type Job = { resolve: (value: unknown) => void; reject: (err: unknown) => void } & (
  | { write: GroupWrite<unknown>; hot?: undefined; proves: boolean }
  | { hot: HotWrite; write?: undefined; proves?: undefined }
);

// Big enough to amortise the commit over many writes, small enough that one transaction stays
// short and a failure retries few writes one by one.
const MAX_BATCH = 512;

/** Hot batches sent before the oldest is committed (store.writeHot runs them in order). */
const HOT_PIPELINE = 2;

export class GroupCommit {
  readonly #store: Store;
  readonly #log: Logger | undefined;
  readonly #health: StoreHealth | undefined;
  #queue: Job[] = [];
  #flushing: Promise<void> | undefined;

  constructor({ store, log, health }: { store: Store; log?: Logger; health?: StoreHealth | undefined }) {
    this.#store = store;
    this.#log = log;
    this.#health = health;
  }

  /** Writes waiting for their transaction. */
  get pending(): number {
    return this.#queue.length;
  }

  /**
   * Resolves with what `write` returned once its transaction is committed (and durable).
   * `proves: false` for a write that may commit nothing (a claim when nothing is due): its commit
   * says nothing of whether the store takes writes, so it does not end an outage (StoreHealth).
   */
  run<T>(write: GroupWrite<T>, { proves = true }: { proves?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ write, proves, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    // Start after the current I/O phase, not now: SQLite's driver is synchronous, so a commit
    // started here would block the event loop and no other request could join it (every batch
    // was one job: 200 concurrent requests made 200 fsyncs). setImmediate is no timer: an idle
    // write still commits at once, and every write requested in the same phase joins the batch.
    this.#flushing ??= new Promise<void>((done) => setImmediate(() => void this.#flush().finally(done)));
  }

  /**
   * A hot write (an execution inserted or completed, with nothing else in its transaction): as
   * data, its batch can be committed off the event loop (store.writeHot). Resolves with whether it
   * was recorded (a completion whose lease was lost is not) once it is durable.
   * `commitNow`: the caller knows it is the only writer for now (http/lone-sender.ts, the webhook
   * front's call): with nothing waiting or being committed, the write is committed at once.
   */
  hot(write: HotWrite, { commitNow = false }: { commitNow?: boolean } = {}): Promise<boolean> {
    if (commitNow && this.#queue.length === 0 && this.#flushing === undefined) {
      const done = this.#hotNow(write);
      if (done !== undefined) return done;
    }
    return new Promise<boolean>((resolve, reject) => {
      this.#queue.push({ hot: write, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  /**
   * One sender's write, with nothing else waiting or being committed: committed on the event loop
   * at once (store.writeHotNow; http/lone-sender.ts says why). Undefined when the store cannot now, or
   * when the commit failed: the batch path then tries it again and reports a failure as it reports
   * any other.
   */
  #hotNow(write: HotWrite): Promise<boolean> | undefined {
    let results: boolean[] | undefined;
    try {
      results = this.#store.writeHotNow?.([write]);
    } catch {
      return undefined;
    }
    if (results === undefined) return undefined;
    this.#health?.succeeded();
    return Promise.resolve(results[0]!);
  }

  /** Resolves once nothing is waiting or being committed. */
  async idle(): Promise<void> {
    while (this.#flushing) await this.#flushing;
  }

  /**
   * Callback transactions run one at a time, each waiting for the previous one to be durable: what
   * queues up meanwhile is the next batch. (Starting the next one without waiting for the fsync was
   * measured: smaller batches, more commits, 20–60 % more CPU per request on the event loop.) Hot
   * batches are committed off the event loop (sqlite/writer.ts), so there writes already waiting
   * when a batch is sent go as the next batch at once, HOT_PIPELINE deep (the writer runs them in
   * order); once the queue has drained, the loop waits for the oldest batch in flight, and what
   * queues up meanwhile makes one bigger batch. (A pump sending whenever a slot is free was measured:
   * no faster, ~20 MB more peak RSS; again, alternated over 30 rounds: webhook 0.96×,
   * workflow 1.01×, 8–9 µs more CPU a request. So under load the writer is usually idle when a
   * batch arrives, and waking it now and then costs the event loop its core for a moment: that is
   * the slow `postMessage` sampled profiles show, not CPU: docs/performance.md, on-CPU profiles.)
   */
  async #flush(): Promise<void> {
    const inflight: Promise<void>[] = [];
    try {
      for (;;) {
        if (this.#queue.length === 0) {
          if (inflight.length === 0) break;
          await inflight.shift();
          continue;
        }
        const batch = this.#queue.splice(0, MAX_BATCH);
        // Consecutive jobs of one kind share a transaction: hot writes through store.writeHot,
        // callbacks through store.transaction, which waits until no hot batch is in flight.
        for (let i = 0; i < batch.length; ) {
          let j = i + 1;
          while (j < batch.length && (batch[j]!.hot === undefined) === (batch[i]!.hot === undefined)) j++;
          const run = batch.slice(i, j);
          if (run[0]!.hot !== undefined) {
            if (inflight.length >= HOT_PIPELINE) await inflight.shift();
            inflight.push(this.#commit(run));
          } else {
            while (inflight.length > 0) await inflight.shift();
            await this.#commit(run);
          }
          i = j;
        }
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  async #commit(batch: Job[]): Promise<void> {
    let results: unknown[];
    try {
      results =
        batch[0]!.hot !== undefined
          ? await this.#store.writeHot(batch.map((job) => job.hot!))
          : await this.#store.transaction(async (trx) => {
              const out: unknown[] = [];
              for (const job of batch) out.push(await job.write!(trx));
              return out;
            });
    } catch (err) {
      if (this.#health?.failed(err) ?? isStoreUnavailable(err)) {
        const refused = storeUnavailable(err);
        for (const job of batch) job.reject(refused);
        return;
      }
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
      this.#log?.warn({ err, size: batch.length }, 'group commit failed; retrying writes one by one');
      for (const job of batch) await this.#commit([job]);
      return;
    }
    if (batch.some((job) => job.proves !== false)) this.#health?.succeeded();
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i]);
  }
}
