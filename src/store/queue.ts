/**
 * The queue's statements on the executions table (no SQL outside store/). The policy —
 * leases, attempts, backoff, when to look for what — is queue/queue.ts's; here is only how each
 * step reads and writes rows, for both dialects: where PostgreSQL has `FOR UPDATE SKIP LOCKED`
 * (caps.skipLocked) the row-picking subqueries take it, so workers never block on or
 * double-claim a row (graphile-worker's get_jobs); SQLite has one writer, so there the same
 * UPDATE … RETURNING is already exclusive. Executions with a concurrency key are claimed by the
 * statements of queue-keys.ts, part of `queueRepo`.
 */
import { type SelectQueryBuilder, sql } from 'kysely';
import type { Database, ExecutionRow } from './schema.js';
import { keyedQueueRepo } from './queue-keys.js';
import { type ClaimFields, claimRows, locked } from './queue-rows.js';
import type { Store } from './store.js';

export type { ClaimFields } from './queue-rows.js';
export type { KeyedClaim } from './queue-keys.js';

/**
 * `backlog` counts due rows up to this many: counting reads each row's index entry (SQLite,
 * measured here: 100 000 rows in 11–18 ms, 900 000 in 150–175 ms), and a SQLite read blocks the
 * event loop, once per scrape. A deeper backlog shows as this number; its age still tells how far
 * behind the executors are (the earliest due row is found in the index at once: 0.03 ms).
 */
export const BACKLOG_COUNT_MAX = 100_000;

/** An execution the queue itself failed (its attempts used up by crashes): who may need telling. */
export type GaveUpRow = Pick<
  ExecutionRow,
  'id' | 'workflow_id' | 'workflow_version' | 'mode' | 'attempt' | 'parent_execution_id'
>;

const GAVE_UP_COLUMNS = [
  'id',
  'workflow_id',
  'workflow_version',
  'mode',
  'attempt',
  'status',
  'parent_execution_id',
] as const;

/** The rows of a recovery that were failed rather than queued again. */
const gaveUp = (rows: (GaveUpRow & { status: string })[]): GaveUpRow[] =>
  rows.filter((r) => r.status === 'failed').map(({ status: _, ...row }) => row);

/**
 * A queued execution that a batch ran to its end inside its own transaction (queue/pure-batch.ts):
 * what its row becomes. Times are ISO-8601 UTC, JSON as text.
 */
export interface BatchFinished {
  id: string;
  status: 'succeeded' | 'failed' | 'filtered';
  steps: string;
  error: string | null;
  startedAt: string;
  finishedAt: string;
}

/**
 * What a batch does with the rows it locked: those it ran to their end, and those it claims (set
 * `running` under `claim`, to be started once committed). Every other row stays `queued`.
 */
export interface BatchOutcome {
  finished: readonly BatchFinished[];
  claimed: readonly string[];
}

/**
 * Both writes of a batch in one statement (one round trip before the COMMIT): the finished rows
 * spread from one array per column by `unnest` (as postgres/hot-writes.ts does), so the text is
 * the same whatever the batch holds, and the claimed ids as one array (empty arrays: no rows).
 * `status = 'queued'` is what the batch locked them as; it only guards against a misuse.
 *
 * `e.id = any(ids)` besides the join: without it PostgreSQL may join the unnested rows to a
 * sequential scan of the whole table, which it did with statistics that lagged behind a drain
 * (EXPLAIN ANALYZE, 128 rows of a 10 000-row table: 27 of the update's 36 ms, against 2 ms through
 * the primary key with this condition).
 */
function settleBatch(outcome: BatchOutcome, claim: ClaimFields) {
  const f = outcome.finished;
  const ids = f.map((r) => r.id);
  return sql`with finished as (
    update executions as e
       set status = f.status, steps = f.steps, error = f.error, started_at = f.started_at,
           finished_at = f.finished_at, locked_by = null, locked_until = null
      from unnest(${ids}::text[], ${f.map((r) => r.status)}::text[],
                  ${f.map((r) => r.steps)}::text[], ${f.map((r) => r.error)}::text[],
                  ${f.map((r) => r.startedAt)}::text[], ${f.map((r) => r.finishedAt)}::text[])
           as f(id, status, steps, error, started_at, finished_at)
     where e.id = any(${ids}::text[]) and e.id = f.id and e.status = 'queued'
  )
  update executions
     set status = 'running', locked_by = ${claim.locked_by}, locked_until = ${claim.locked_until},
         started_at = case when resume_state is null then ${claim.started_at} else started_at end
   where id = any(${[...outcome.claimed]}::text[]) and status = 'queued'`;
}

/**
 * Due rows of one status, in the order the (status, run_after) index keeps them. Queued rows with a
 * concurrency key are left to `claimKeyed` (their turn is their key's); a waiting one holds its
 * key's turn already (`KEY_HOLDING`), so it resumes like any other.
 */
function dueIn<O>(
  q: SelectQueryBuilder<Database, 'executions', O>,
  status: 'queued' | 'waiting',
  nowIso: string,
): SelectQueryBuilder<Database, 'executions', O> {
  const due = q.where('status', '=', status).where('run_after', '<=', nowIso);
  return (status === 'queued' ? due.where('concurrency_key', 'is', null) : due)
    .orderBy('run_after')
    .orderBy('id');
}

export const queueRepo = {
  ...keyedQueueRepo,

  /**
   * Claims up to `limit` rows of `status` due at `nowIso`, oldest due first, writing `claim` on
   * them (a resumed execution, one with a checkpoint, keeps the time it first started). Rows come
   * back in no particular order. `db`: a transaction to run in (SQLite: group commit's, see
   * queue/queue.ts `#claimDue`), else the store's own connection.
   *
   * `maxChars` bounds the trigger JSON the claim takes (the claimed rows are held in memory until
   * they run): rows are taken, oldest first, while the ones before them total less than it, so
   * the first due row is always taken, however big. A claim that took `maxChars` or more may have
   * left due rows behind; one that took less did not, unless it reached `limit`.
   */
  async claimDue(
    store: Store,
    status: 'queued' | 'waiting',
    nowIso: string,
    limit: number,
    claim: ClaimFields,
    db: Store['db'] = store.db,
    maxChars?: number,
  ): Promise<ExecutionRow[]> {
    if (maxChars === undefined) {
      const due = dueIn(db.selectFrom('executions').select('id'), status, nowIso).limit(limit);
      return claimRows(db, locked(store, due), claim);
    }
    // The sizes of the `limit` oldest first, then the claim of those that fit, in one transaction.
    // (Summing them with a window function in the claim's statement made a SQLite claim of 64 rows
    // take 0.56 ms instead of 0.30; this takes 0.35.)
    const sized = async (trx: Store['db']) => {
      const size = sql<number>`length(trigger)`.as('chars');
      const due = await locked(
        store,
        dueIn(trx.selectFrom('executions').select(['id', size]), status, nowIso).limit(limit),
      ).execute();
      const ids: string[] = [];
      for (let i = 0, before = 0; i < due.length && before < maxChars; before += due[i]!.chars, i++)
        ids.push(due[i]!.id);
      return ids.length === 0 ? [] : claimRows(trx, ids, claim);
    };
    return db.isTransaction ? sized(db) : db.transaction().execute(sized);
  },

  /**
   * One batch of queued rows in one transaction (PostgreSQL: caps.skipLocked): up to `limit` rows
   * due at `nowIso` are locked oldest due first, skipping rows other transactions hold (SKIP
   * LOCKED: two workers never get the same row, nor wait for each other), and handed to `decide`;
   * what it returns is written in one statement and committed. Until the COMMIT the rows are still
   * `queued` for everyone else: a worker that dies before it leaves them untouched (its connection
   * closes, the transaction rolls back, the locks go). Rows `decide` leaves alone stay `queued`
   * and are unlocked by the COMMIT. `decide` runs with the transaction open: keep it short, and
   * no network calls in it.
   */
  async batchQueued<T extends BatchOutcome>(
    store: Store,
    nowIso: string,
    limit: number,
    claim: ClaimFields,
    decide: (rows: ExecutionRow[]) => Promise<T>,
  ): Promise<T> {
    if (!store.caps.skipLocked) throw new Error('batchQueued needs FOR UPDATE SKIP LOCKED (PostgreSQL)');
    return store.transaction(async (trx) => {
      const rows = await trx
        .selectFrom('executions')
        .selectAll()
        .where('status', '=', 'queued')
        .where('run_after', '<=', nowIso)
        // Keyed rows start in their key's turn (claimKeyed), never in a batch.
        .where('concurrency_key', 'is', null)
        .orderBy('run_after')
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute();
      if (rows.length === 0) return decide(rows);
      const outcome = await decide(rows);
      if (outcome.finished.length > 0 || outcome.claimed.length > 0)
        await settleBatch(outcome, claim).execute(trx);
      return outcome;
    });
  },

  /**
   * Running rows whose lease lapsed before `nowIso` go back to `queued` as their next attempt, or,
   * at `maxAttempts`, are failed with `gaveUp` (JSON) as their error. Only rows it can lock at once
   * (SKIP LOCKED), in id order: it never waits on, nor deadlocks with, a completion or a heartbeat.
   * Returns how many rows it released, and those it failed.
   */
  async recoverLapsed(
    store: Store,
    nowIso: string,
    maxAttempts: number,
    gaveUpError: string,
    /** Instead of the lapsed ones: every `running` row this worker holds (it stops: Queue.releaseHeld). */
    heldBy?: string,
  ): Promise<{ released: number; gaveUp: GaveUpRow[] }> {
    const db = store.db;
    const running = db.selectFrom('executions').select('id').where('status', '=', 'running');
    const lapsed = locked(
      store,
      (heldBy === undefined
        ? running.where('locked_until', '<', nowIso)
        : running.where('locked_by', '=', heldBy)
      ).orderBy('id'),
    );
    const exhausted = sql<boolean>`attempt >= ${maxAttempts}`;
    const res = await db
      .updateTable('executions')
      .set({
        status: sql`case when ${exhausted} then 'failed' else 'queued' end`,
        attempt: sql<number>`case when ${exhausted} then attempt else attempt + 1 end`,
        error: sql`case when ${exhausted} then ${gaveUpError} else error end`,
        finished_at: sql`case when ${exhausted} then ${nowIso} else null end`,
        locked_by: null,
        locked_until: null,
      })
      .where('id', 'in', lapsed)
      .returning(GAVE_UP_COLUMNS)
      .execute();
    return { released: res.length, gaveUp: gaveUp(res) };
  },

  /**
   * The backlog at `nowIso` (the /metrics gauges): executions due and not taken by a worker —
   * `queued` ones and `waiting` ones whose time has come, `run_after` at or before `nowIso` — how
   * many (counted up to BACKLOG_COUNT_MAX), and the earliest `run_after` among them (undefined when
   * none). All three read the (status, run_after) index: the earliest due row of each status is
   * its range's first entry; the count reads the rows it counts.
   */
  async backlog(store: Store, nowIso: string): Promise<{ depth: number; oldestDueAt: string | undefined }> {
    const db = store.db;
    const due = (status: 'queued' | 'waiting') =>
      db.selectFrom('executions').where('status', '=', status).where('run_after', '<=', nowIso);
    const row = await db
      .selectNoFrom((eb) => [
        eb
          .selectFrom(
            db
              .selectFrom('executions')
              // From the index alone (SQLite's rows are found by rowid, not `id`).
              .select('run_after')
              .where('status', 'in', ['queued', 'waiting'])
              .where('run_after', '<=', nowIso)
              .limit(BACKLOG_COUNT_MAX)
              .as('due'),
          )
          .select((c) => c.fn.countAll<number | string>().as('n'))
          .as('depth'),
        due('queued')
          .select((m) => m.fn.min('run_after').as('at'))
          .as('queued'),
        due('waiting')
          .select((m) => m.fn.min('run_after').as('at'))
          .as('waiting'),
      ])
      .executeTakeFirstOrThrow();
    const times = [row.queued, row.waiting].filter((t): t is string => typeof t === 'string');
    return { depth: Number(row.depth ?? 0), oldestDueAt: times.sort()[0] };
  },

  /** Executions `running` now, held by any worker (counted up to BACKLOG_COUNT_MAX; one index range). */
  async running(store: Store): Promise<number> {
    const row = await store.db
      .selectFrom(
        store.db
          .selectFrom('executions')
          .select('run_after')
          .where('status', '=', 'running')
          .limit(BACKLOG_COUNT_MAX)
          .as('r'),
      )
      .select((c) => c.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n ?? 0);
  },

  /** The earliest `run_after` of a waiting row, undefined when none waits. */
  async nextWaiting(store: Store): Promise<string | undefined> {
    const row = await store.db
      .selectFrom('executions')
      .select('run_after')
      .where('status', '=', 'waiting')
      .orderBy('run_after')
      .limit(1)
      .executeTakeFirst();
    return row?.run_after;
  },

  /**
   * Sets `locked_until` on those of `ids` that `workerId` holds, skipping rows locked by another
   * transaction (SKIP LOCKED, in id order: a row being completed needs no heartbeat, and waiting
   * for it could deadlock with that completion's batch).
   */
  async extendLeases(
    store: Store,
    ids: readonly string[],
    workerId: string,
    lockedUntil: string,
  ): Promise<void> {
    if (ids.length === 0) return;
    const db = store.db;
    const mine = locked(
      store,
      db
        .selectFrom('executions')
        .select('id')
        .where('id', 'in', ids)
        .where('locked_by', '=', workerId)
        .orderBy('id'),
    );
    await db.updateTable('executions').set({ locked_until: lockedUntil }).where('id', 'in', mine).execute();
  },

  /**
   * The execution `id`, while `workerId` holds it, is queued again as attempt `nextAttempt`, due at
   * `runAfter`, with `error` (JSON); its step records are cleared unless it resumes from a
   * checkpoint (the records before the checkpoint stay).
   */
  async requeue(
    store: Store,
    id: string,
    workerId: string,
    { nextAttempt, runAfter, error }: { nextAttempt: number; runAfter: string; error: string },
  ): Promise<void> {
    await store.db
      .updateTable('executions')
      .set({
        status: 'queued',
        attempt: nextAttempt,
        steps: sql<string>`case when resume_state is null then '[]' else steps end`,
        error,
        run_after: runAfter,
        locked_by: null,
        locked_until: null,
      })
      .where('id', '=', id)
      .where('locked_by', '=', workerId)
      .execute();
  },

  /** The execution `id`, while `workerId` holds it, is failed for good with `error` (JSON). */
  async fail(store: Store, id: string, workerId: string, error: string, finishedAt: string): Promise<void> {
    await store.db
      .updateTable('executions')
      .set({ status: 'failed', error, finished_at: finishedAt, locked_by: null, locked_until: null })
      .where('id', '=', id)
      .where('locked_by', '=', workerId)
      .execute();
  },

  /**
   * Every `running` row: failed with `gaveUp` (JSON) at `maxAttempts`, else queued again as its
   * next attempt. For a process that owns the whole store, at start. Returns how many it released.
   */
  async releaseRunning(
    store: Store,
    nowIso: string,
    maxAttempts: number,
    gaveUpError: string,
  ): Promise<{ released: number; gaveUp: GaveUpRow[] }> {
    const failed = await store.db
      .updateTable('executions')
      .set({ status: 'failed', error: gaveUpError, finished_at: nowIso, locked_by: null, locked_until: null })
      .where('status', '=', 'running')
      .where('attempt', '>=', maxAttempts)
      .returning(GAVE_UP_COLUMNS)
      .execute();
    const requeued = await store.db
      .updateTable('executions')
      .set({ status: 'queued', attempt: sql<number>`attempt + 1`, locked_by: null, locked_until: null })
      .where('status', '=', 'running')
      .executeTakeFirst();
    return { released: failed.length + Number(requeued.numUpdatedRows), gaveUp: gaveUp(failed) };
  },
};
