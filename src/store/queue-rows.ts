/**
 * Row helpers both claims share (queue.ts, queue-keys.ts): the claim written on rows, and the
 * row-picking that skips locked rows where the store can.
 */
import { type SelectQueryBuilder, sql } from 'kysely';
import type { Database, ExecutionRow } from './schema.js';
import type { Store } from './store.js';

/** The fields that make an execution claimed by a worker (queue/queue.ts `claimFields`). */
export interface ClaimFields {
  status: 'running';
  locked_by: string;
  locked_until: string;
  started_at: string;
}

/** Writes `claim` on the rows `ids` names (a resumed execution keeps the time it first started). */
export function claimRows(
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
export function locked<O>(
  store: Store,
  q: SelectQueryBuilder<Database, 'executions', O>,
): SelectQueryBuilder<Database, 'executions', O> {
  return store.caps.skipLocked ? q.forUpdate().skipLocked() : q;
}
