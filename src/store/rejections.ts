/**
 * Refused webhook calls (webhooks/options/rejections.ts decides what is kept and when): the rows
 * of one workflow newest first (ids are time-ordered), a batch insert, and the two prunes.
 */
import type { RejectionsTable } from './schema.js';
import type { Db } from './store.js';

/** A refused call as listed: the row less its own keys. */
export type Rejection = Omit<RejectionsTable, 'id' | 'workflow_id'>;

export const rejectionsRepo = {
  /** The newest `limit` of a workflow, newest first. */
  async list(db: Db, workflowId: string, limit: number): Promise<Rejection[]> {
    return db
      .selectFrom('rejections')
      .select(['at', 'mode', 'code', 'message', 'method', 'ip'])
      .where('workflow_id', '=', workflowId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  },
  async insert(db: Db, rows: readonly RejectionsTable[]): Promise<void> {
    if (rows.length > 0) await db.insertInto('rejections').values(rows).execute();
  },
  /** Keeps the newest `keep` rows of a workflow. */
  async keepNewest(db: Db, workflowId: string, keep: number): Promise<void> {
    const edge = await db
      .selectFrom('rejections')
      .select('id')
      .where('workflow_id', '=', workflowId)
      .orderBy('id', 'desc')
      .offset(keep)
      .limit(1)
      .executeTakeFirst();
    if (edge)
      await db
        .deleteFrom('rejections')
        .where('workflow_id', '=', workflowId)
        .where('id', '<=', edge.id)
        .execute();
  },
  /** Deletes the rows of every workflow refused before `at` (ISO-8601). */
  async deleteBefore(db: Db, at: string): Promise<void> {
    await db.deleteFrom('rejections').where('at', '<', at).execute();
  },
};
