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
import { UNFINISHED_STATUSES } from '../store/executions.js';
import type { Store } from '../store/store.js';

/** Rows per delete transaction: ~2 ms of SQLite work, so a sweep never stalls ingest for long. */
const BATCH = 200;
/** Between sweeps (shorter when the age limit is shorter). */
const SWEEP_MS = 5_000;
/**
 * Written `status NOT IN (queued, running, waiting)`, not `IN (succeeded, failed, filtered)`: for the IN,
 * SQLite (without ANALYZE statistics, as a hookflow database is) walks the (status, run_after)
 * index through every finished execution instead of the id range: 5.5 ms instead of 0.3 ms per
 * statement with 50 000 executions, and a sweep at full load cut throughput by a third.
 */
const UNFINISHED = UNFINISHED_STATUSES;

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
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<number> | undefined;
  #stopped = false;

  constructor({ store, log, ...limits }: { store: Store; log: Logger } & RetentionLimits) {
    this.#store = store;
    this.#log = log;
    this.#limits = limits;
  }

  get enabled(): boolean {
    return this.#limits.maxAgeMs !== undefined || this.#limits.maxCount !== undefined;
  }

  /** Sweep now and then every few seconds, until `close`. */
  start(): void {
    if (!this.enabled) return;
    const every = Math.min(SWEEP_MS, this.#limits.maxAgeMs ?? SWEEP_MS);
    const tick = () => {
      if (this.#stopped) return;
      this.#sweeping ??= this.sweep()
        .catch((err) => {
          this.#log.error({ err }, 'deleting old executions failed');
          return 0;
        })
        .finally(() => {
          this.#sweeping = undefined;
        });
    };
    this.#timer = setInterval(tick, every);
    this.#timer.unref();
    setImmediate(tick);
  }

  /** Deletes what the limits say is too old or too many; returns how many executions. */
  async sweep(now = Date.now()): Promise<number> {
    const db = this.#store.db;
    const { maxAgeMs, maxCount } = this.#limits;
    const olderThan = maxAgeMs === undefined ? undefined : uuidV7Floor(now - maxAgeMs);
    const atOrBelow =
      maxCount === undefined
        ? undefined
        : (
            await db
              .selectFrom('executions')
              .select('id')
              .orderBy('id', 'desc')
              .limit(1)
              .offset(maxCount)
              .executeTakeFirst()
          )?.id;
    if (olderThan === undefined && atOrBelow === undefined) return 0;
    let deleted = 0;
    while (!this.#stopped) {
      // The batch: the oldest finished executions past a cut-off, as an id range [first, last]
      // (one walk of the primary key), so the deletes below are range scans with two parameters,
      // not lists of hundreds of ids to bind, compile and look up one by one.
      const batch = db
        .selectFrom('executions')
        .select('id')
        .where('status', 'not in', UNFINISHED)
        .where((eb) =>
          eb.or([
            ...(olderThan !== undefined ? [eb('id', '<', olderThan)] : []),
            ...(atOrBelow !== undefined ? [eb('id', '<=', atOrBelow)] : []),
          ]),
        )
        .orderBy('id')
        .limit(BATCH);
      const range = await db
        .selectFrom(batch.as('batch'))
        .select((eb) => [eb.fn.min('id').as('first'), eb.fn.max('id').as('last'), eb.fn.countAll().as('n')])
        .executeTakeFirst();
      const n = Number(range?.n ?? 0);
      if (!range || n === 0 || range.first === null || range.last === null) break;
      const { first, last } = range as { first: string; last: string };
      // Queued and running executions inside the range stay: every delete repeats the status test.
      await this.#store.transaction(async (trx) => {
        const inRange = trx
          .selectFrom('executions')
          .select('id')
          .where('id', '>=', first)
          .where('id', '<=', last)
          .where('status', 'not in', UNFINISHED);
        await trx
          .deleteFrom('blob_parts')
          .where('blob_id', 'in', (eb) =>
            eb.selectFrom('blobs').select('id').where('execution_id', 'in', inRange),
          )
          .execute();
        await trx.deleteFrom('blobs').where('execution_id', 'in', inRange).execute();
        // Searchable fields (issue 19), found like the files through an index on execution_id.
        await trx.deleteFrom('execution_fields').where('execution_id', 'in', inRange).execute();
        await trx
          .deleteFrom('executions')
          .where('id', '>=', first)
          .where('id', '<=', last)
          .where('status', 'not in', UNFINISHED)
          .execute();
      });
      deleted += n;
      if (n < BATCH) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (deleted > 0) this.#log.debug({ deleted }, 'deleted old executions');
    return deleted;
  }

  async close(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#sweeping;
  }
}

/** The smallest UUIDv7 of millisecond `ms`: every id created before `ms` sorts below it. */
export function uuidV7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}
