/**
 * Executions retention (HOOKFLOW_EXECUTIONS_MAX_AGE, HOOKFLOW_EXECUTIONS_MAX_COUNT): finished
 * executions older than the age, or beyond the count (oldest first), are deleted with their
 * uploaded files and searchable fields. Queued, running and waiting executions are never deleted.
 * Without it the executions table grows by every request forever (at 10 000 req/s, ~1 GB of
 * SQLite a minute).
 *
 * Both limits are cut-offs on the id: ids are UUIDv7, ordered by creation time, so "older than
 * the age" is `id < <the UUIDv7 prefix of now - age>` and "beyond the count" is `id <= <the
 * (count+1)-th newest id>`, both walks of the primary key. Deleting happens in batches of 200
 * rows, one short transaction each, yielding to requests in between: the store has one writer,
 * and a long delete would hold every webhook commit behind it. Deleting is not free: a deleted
 * execution costs about what storing it did (four b-trees), so a process at full load with a
 * count limit does both, and serves fewer requests per second than without one.
 */
import type { Logger } from 'pino';
import { type Cancel, type Clock, systemClock } from '../shared/clock.js';
import { executionsRepo } from '../store/executions.js';
import type { Store } from '../store/store.js';

/** Rows per delete transaction: ~2 ms of SQLite work, so a sweep never stalls ingest for long. */
const BATCH = 200;
/** Between sweeps (shorter when the age limit is shorter). */
const SWEEP_MS = 5_000;
/**
 * After a sweep that found a batch or more to delete: executions arrive faster than one sweep
 * every SWEEP_MS keeps up with, so the next comes sooner. At 21 000 req/s a count limit of 100 000
 * kept up to twice that between sweeps (166 000 at the end of the bench's soak); each execution is
 * deleted once either way, and a sweep with nothing to delete costs two index walks (~1 ms).
 */
const BEHIND_MS = 250;

export interface RetentionLimits {
  /** Delete finished executions created longer ago than this. */
  maxAgeMs: number | undefined;
  /** Keep at most this many executions: delete the oldest finished ones beyond. */
  maxCount: number | undefined;
}

export class Retention {
  readonly #store: Store;
  readonly #log: Logger;
  readonly #limits: RetentionLimits;
  readonly #clock: Clock;
  #cancelTimer: Cancel | undefined;
  #sweeping: Promise<number> | undefined;
  #stopped = false;

  constructor({
    store,
    log,
    clock = systemClock,
    ...limits
  }: { store: Store; log: Logger; clock?: Clock } & RetentionLimits) {
    this.#store = store;
    this.#log = log;
    this.#clock = clock;
    this.#limits = limits;
  }

  get enabled(): boolean {
    return this.#limits.maxAgeMs !== undefined || this.#limits.maxCount !== undefined;
  }

  /**
   * Sweep now and then every few seconds, until `close`; sooner while a sweep finds a batch or more
   * to delete each time (`nextSweepIn`).
   */
  start(): void {
    if (!this.enabled) return;
    const every = Math.min(SWEEP_MS, this.#limits.maxAgeMs ?? SWEEP_MS);
    const tick = () => {
      if (this.#stopped) return;
      this.#sweeping = this.sweep()
        .catch((err) => {
          this.#log.error({ err }, 'deleting old executions failed');
          return 0;
        })
        .then((deleted) => {
          this.#sweeping = undefined;
          if (this.#stopped) return 0;
          this.#cancelTimer = this.#clock.setTimeout(tick, nextSweepIn(deleted, every));
          return deleted;
        });
    };
    setImmediate(tick);
  }

  /** Deletes what the limits say is too old or too many; returns how many executions. */
  async sweep(now = this.#clock.now()): Promise<number> {
    const db = this.#store.db;
    const { maxAgeMs, maxCount } = this.#limits;
    const olderThan = maxAgeMs === undefined ? undefined : uuidV7Floor(now - maxAgeMs);
    const atOrBelow = maxCount === undefined ? undefined : await executionsRepo.nthNewestId(db, maxCount);
    if (olderThan === undefined && atOrBelow === undefined) return 0;
    let deleted = 0;
    while (!this.#stopped) {
      // The batch: the oldest finished executions past a cut-off, as an id range (one walk of the
      // primary key), deleted in one short transaction.
      const range = await executionsRepo.finishedRange(db, { olderThan, atOrBelow }, BATCH);
      if (!range) break;
      const { first, last, n } = range;
      await this.#store.transaction((trx) => executionsRepo.deleteFinishedRange(trx, first, last));
      deleted += n;
      if (n < BATCH) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (deleted > 0) this.#log.debug({ deleted }, 'deleted old executions');
    return deleted;
  }

  async close(): Promise<void> {
    this.#stopped = true;
    this.#cancelTimer?.();
    await this.#sweeping;
  }
}

/** Milliseconds until the next sweep, after one that deleted `deleted` executions. */
export function nextSweepIn(deleted: number, every: number): number {
  return deleted >= BATCH ? Math.min(BEHIND_MS, every) : every;
}

/** The smallest UUIDv7 of millisecond `ms`: every id created before `ms` sorts below it. */
export function uuidV7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}
