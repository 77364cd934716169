/**
 * The queue's statements for executions with a concurrency key (SPEC 7d, `settings.concurrency`):
 * the claim rule that keeps first in, first out per key across processes, and newest wins.
 * queue.ts's `queueRepo` includes these.
 */
import { sql } from 'kysely';
import { type ClaimFields, claimRows } from './queue-rows.js';
import type { ExecutionRow } from './schema.js';
import type { Store } from './store.js';

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

export const keyedQueueRepo = {
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
    if (!db.isTransaction && !(await keyedQueueRepo.keyedMayStart(db, nowIso))) return none;
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

  /**
   * Whether a keyed row may start now (`keyedCandidates`), read outside any transaction: first
   * whether one is queued at all (`keyedQueued`), then the rule itself.
   */
  async keyedMayStart(db: Store['db'], nowIso: string): Promise<boolean> {
    if (!(await keyedQueueRepo.keyedQueued(db))) return false;
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
};
