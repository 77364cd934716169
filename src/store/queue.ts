/**
 * The queue's statements on the executions table (no SQL outside store/). The policy —
 * leases, attempts, backoff, when to look for what — is queue/queue.ts's; here is only how each
 * step reads and writes rows, for both dialects: where PostgreSQL has `FOR UPDATE SKIP LOCKED`
 * (caps.skipLocked) the row-picking subqueries take it, so workers never block on or
 * double-claim a row (graphile-worker's get_jobs); SQLite has one writer, so there the same
 * UPDATE … RETURNING is already exclusive.
 */
import { type SelectQueryBuilder, sql } from 'kysely';
import type { Database, ExecutionRow } from './schema.js';
import type { Store } from './store.js';

/**
 * `backlog` counts due rows up to this many: counting reads each row's index entry (SQLite,
 * measured here: 100 000 rows in 11–18 ms, 900 000 in 150–175 ms), and a SQLite read blocks the
 * event loop, once per scrape. A deeper backlog shows as this number; its age still tells how far
 * behind the executors are (the earliest due row is found in the index at once: 0.03 ms).
 */
export const BACKLOG_COUNT_MAX = 100_000;

/** The fields that make an execution claimed by a worker (queue/queue.ts `claimFields`). */
export interface ClaimFields {
  status: 'running';
  locked_by: string;
  locked_until: string;
  started_at: string;
}

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

/**
 * The statuses of an execution that has its key's turn or waits for it: the rows the claim rule
 * counts (read from the partial index `executions_concurrency`). A `waiting` execution keeps its
 * turn: it has started and not ended, and a later one of its key must not overtake it (a Stripe
 * customer's events applied in order even when one of them waits).
 */
const KEY_ACTIVE = ['queued', 'running', 'waiting'] as const;

/** A keyed row `claimKeyed` may start, as the rule picked it. */
interface KeyedCandidate {
  id: string;
  workflow_id: string;
  concurrency_key: string;
  newest_value: number | null;
}

/** What `claimKeyed` did: rows claimed for this worker, and rows it ended `skipped` instead. */
export interface KeyedClaim {
  claimed: ExecutionRow[];
  skipped: ExecutionRow[];
}

/**
 * The claim rule of concurrency keys (SPEC 7d), one statement: of the unfinished rows of each
 * workflow and key (`KEY_ACTIVE`, read from the partial index, ordered by key and id, id being the
 * order accepted), a queued row may start when the key's running and waiting rows plus the queued
 * rows accepted before it number fewer than its limit; due ones are taken oldest due first.
 *
 * Counting the queued rows ahead, not only the running ones, is what keeps first in, first out:
 * a row queued again (a crashed attempt whose lease lapsed, a backoff) keeps its id and so its
 * place at the head, and the rows behind it wait for it even while it is not due. It also holds
 * across processes without a lock of its own: in any one snapshot an unfinished row is either
 * queued (ahead of the later ones) or running/waiting (busy), so two claims can only both pick the
 * same head row, and FOR UPDATE SKIP LOCKED gives it to one of them (`claimKeyed`).
 */
function keyedCandidates(db: Store['db'], nowIso: string, limit: number) {
  const ranked = db
    .selectFrom('executions')
    .select([
      'id',
      'workflow_id',
      'concurrency_key',
      'newest_value',
      'status',
      'run_after',
      'concurrency_limit',
      sql<number>`sum(case when status = 'queued' then 0 else 1 end) over (partition by workflow_id, concurrency_key)`.as(
        'busy',
      ),
      sql<
        number | null
      >`sum(case when status = 'queued' then 1 else 0 end) over (partition by workflow_id, concurrency_key order by id rows between unbounded preceding and 1 preceding)`.as(
        'ahead',
      ),
    ])
    .where('concurrency_key', 'is not', null)
    .where('status', 'in', KEY_ACTIVE);
  return db
    .selectFrom(ranked.as('r'))
    .select(['r.id', 'r.workflow_id', 'r.concurrency_key', 'r.newest_value'])
    .where('r.status', '=', 'queued')
    .where('r.run_after', '<=', nowIso)
    .where(sql<boolean>`r.busy + coalesce(r.ahead, 0) < coalesce(r.concurrency_limit, 1)`)
    .orderBy('r.run_after')
    .orderBy('r.id')
    .limit(limit);
}

/** `workflow_id` and `concurrency_key` as one map key. */
const pairKey = (r: { workflow_id: string; concurrency_key: string }) =>
  `${r.workflow_id}\u0000${r.concurrency_key}`;

/** Writes `claim` on the rows `ids` names (a resumed execution keeps the time it first started). */
function claimRows(
  db: Store['db'],
  ids: SelectQueryBuilder<Database, 'executions', { id: string }> | readonly string[],
  claim: ClaimFields,
): Promise<ExecutionRow[]> {
  return db
    .updateTable('executions')
    .set({
      ...claim,
      started_at: sql<string>`case when resume_state is null then ${claim.started_at} else started_at end`,
    })
    .where('id', 'in', ids)
    .returningAll()
    .execute();
}

/** `q` taking only rows it can lock at once, where the store can (PostgreSQL: FOR UPDATE SKIP LOCKED). */
function locked<O>(
  store: Store,
  q: SelectQueryBuilder<Database, 'executions', O>,
): SelectQueryBuilder<Database, 'executions', O> {
  return store.caps.skipLocked ? q.forUpdate().skipLocked() : q;
}

/**
 * The newest-wins marks of the keys of `rows` (PostgreSQL: locked, in key order, so two claims
 * taking rows of one key settle one after the other, the second seeing the first's mark; the row
 * is made first when missing, at the lowest value among `rows`, which changes no comparison).
 */
async function lockMarks(
  store: Store,
  trx: Store['db'],
  rows: readonly KeyedCandidate[],
): Promise<Map<string, number>> {
  const lowest = new Map<string, { workflow_id: string; concurrency_key: string; newest: number }>();
  for (const r of rows) {
    if (r.newest_value === null) continue;
    const k = pairKey(r);
    const seen = lowest.get(k);
    if (!seen || r.newest_value < seen.newest)
      lowest.set(k, {
        workflow_id: r.workflow_id,
        concurrency_key: r.concurrency_key,
        newest: r.newest_value,
      });
  }
  const marks = new Map<string, number>();
  if (lowest.size === 0) return marks;
  const pairs = [...lowest.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, p]) => p);
  if (store.caps.skipLocked)
    await trx
      .insertInto('concurrency_marks')
      .values(pairs)
      .onConflict((oc) => oc.columns(['workflow_id', 'concurrency_key']).doNothing())
      .execute();
  const q = trx
    .selectFrom('concurrency_marks')
    .select(['workflow_id', 'concurrency_key', 'newest'])
    .where((eb) =>
      eb.or(
        pairs.map((p) =>
          eb.and([eb('workflow_id', '=', p.workflow_id), eb('concurrency_key', '=', p.concurrency_key)]),
        ),
      ),
    )
    .orderBy('workflow_id')
    .orderBy('concurrency_key');
  for (const m of await (store.caps.skipLocked ? q.forUpdate() : q).execute())
    marks.set(pairKey(m), Number(m.newest));
  return marks;
}

export const queueRepo = {
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
   * Claims up to `limit` queued rows with a concurrency key whose turn it is (`keyedCandidates`),
   * writing `claim` on them, and settles newest wins (SPEC 7d): a row whose `newest_value` is lower
   * than the highest of its key that has started (`concurrency_marks`) is ended `skipped`
   * (`skip_reason` superseded, no step run, `finishedAt` now) instead; a started one raises the
   * mark. Rows of one key are settled in the order accepted, so of two taken together the later
   * one is the one compared with the earlier. `db`: a transaction to run in (SQLite: group
   * commit's), else one of its own.
   *
   * Without a transaction given, it first looks outside one whether a keyed row may start
   * (`keyedMayStart`): with none queued (every workflow without the setting) the claim costs one
   * probe of the partial index and nothing else, and a transaction is opened only for a row whose
   * turn it is.
   */
  async claimKeyed(
    store: Store,
    nowIso: string,
    limit: number,
    claim: ClaimFields,
    db: Store['db'] = store.db,
  ): Promise<KeyedClaim> {
    const none: KeyedClaim = { claimed: [], skipped: [] };
    if (limit <= 0) return none;
    if (!db.isTransaction && !(await queueRepo.keyedMayStart(db, nowIso))) return none;
    const settle = async (trx: Store['db']): Promise<KeyedClaim> => {
      // Read again inside the transaction, locking what it picks (PostgreSQL: skipping rows another
      // claim holds, which is then starting that key's head row; `status = 'queued'` is checked
      // again on the row as committed, so a row started meanwhile is not taken twice).
      const picked = trx
        .selectFrom('executions')
        .select(['id', 'workflow_id', 'concurrency_key', 'newest_value'])
        .where('id', 'in', keyedCandidates(trx, nowIso, limit).clearSelect().select('r.id'))
        .where('status', '=', 'queued')
        .orderBy('id');
      const rows = (await (store.caps.skipLocked
        ? picked.forUpdate().skipLocked()
        : picked
      ).execute()) as KeyedCandidate[];
      if (rows.length === 0) return none;
      const marks = await lockMarks(store, trx, rows);
      const start: string[] = [];
      const skip: string[] = [];
      const raised = new Map<string, { workflow_id: string; concurrency_key: string; newest: number }>();
      for (const row of rows) {
        const k = pairKey(row);
        const mark = marks.get(k);
        if (row.newest_value !== null && mark !== undefined && row.newest_value < mark) {
          skip.push(row.id);
          continue;
        }
        start.push(row.id);
        if (row.newest_value !== null && (mark === undefined || row.newest_value > mark)) {
          marks.set(k, row.newest_value);
          raised.set(k, {
            workflow_id: row.workflow_id,
            concurrency_key: row.concurrency_key,
            newest: row.newest_value,
          });
        }
      }
      if (raised.size > 0)
        await trx
          .insertInto('concurrency_marks')
          .values([...raised.values()])
          .onConflict((oc) =>
            oc.columns(['workflow_id', 'concurrency_key']).doUpdateSet({
              newest: sql<number>`case when excluded.newest > concurrency_marks.newest then excluded.newest else concurrency_marks.newest end`,
            }),
          )
          .execute();
      const claimed = start.length > 0 ? await claimRows(trx, start, claim) : [];
      const skipped =
        skip.length > 0
          ? await trx
              .updateTable('executions')
              .set({
                status: 'skipped',
                skip_reason: 'superseded',
                finished_at: nowIso,
                locked_by: null,
                locked_until: null,
              })
              .where('id', 'in', skip)
              .returningAll()
              .execute()
          : [];
      return { claimed, skipped };
    };
    return db.isTransaction ? settle(db) : store.transaction(settle);
  },

  /** Whether a keyed row may start now (`keyedCandidates`): a read, outside any transaction. */
  /**
   * Whether a keyed row may start now (`keyedCandidates`), read outside any transaction: first
   * whether one is queued at all (`keyedQueued`), then the rule itself.
   */
  async keyedMayStart(db: Store['db'], nowIso: string): Promise<boolean> {
    if (!(await queueRepo.keyedQueued(db))) return false;
    return (await keyedCandidates(db, nowIso, 1).execute()).length > 0;
  },

  /**
   * Whether any keyed row is queued (due or not): the gate before a keyed claim. One entry of the
   * partial index (`status = 'queued'` alone, so SQLite reads that index rather than the (status,
   * run_after) one through every queued row). Measured on SQLite at load average ~22 on 2 cores:
   * this gate took 0.07–0.14 ms per claim of a store without keyed rows (the rule not read), with or
   * without 20 000 others queued (a primary-key lookup: 0.03–0.22 ms); the rule's statement alone
   * took 0.4–0.8 ms there.
   */
  async keyedQueued(db: Store['db']): Promise<boolean> {
    const row = await db
      .selectFrom('executions')
      .select('id')
      .where('status', '=', 'queued')
      .where('concurrency_key', 'is not', null)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  },

  /** The newest-wins mark of workflow `workflowId`'s key `key` (undefined: none has started). */
  async concurrencyMark(db: Store['db'], workflowId: string, key: string): Promise<number | undefined> {
    const row = await db
      .selectFrom('concurrency_marks')
      .select('newest')
      .where('workflow_id', '=', workflowId)
      .where('concurrency_key', '=', key)
      .executeTakeFirst();
    return row === undefined ? undefined : Number(row.newest);
  },

  /**
   * Gives an execution just inserted its concurrency key, limit and newest-wins value (SPEC 7d),
   * in the transaction that inserts it. A statement of its own rather than columns of the hot
   * insert, so executions without a key (most) write exactly what they wrote before.
   */
  async setConcurrency(
    db: Store['db'],
    id: string,
    c: { key: string; limit: number; newest: number | null },
  ): Promise<void> {
    await db
      .updateTable('executions')
      .set({ concurrency_key: c.key, concurrency_limit: c.limit, newest_value: c.newest })
      .where('id', '=', id)
      .execute();
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
