/**
 * Sub-workflow executions (SPEC 7f; executions/sub-workflows.ts): a child names its parent
 * execution and the parent's step (`parent_step`: the step's name and forEach indices), unique
 * together, and the parent waits for it.
 */
import type { ExecutionRow } from './schema.js';
import type { Db } from './store.js';

export const subExecutionsRepo = {
  /** The child a parent's step started, if any. */
  async child(db: Db, parentId: string, parentStep: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('executions')
      .select('id')
      .where('parent_execution_id', '=', parentId)
      .where('parent_step', '=', parentStep)
      .executeTakeFirst();
    return row?.id;
  },

  /** What a child's start needs to know of its parent: its mode, depth and own parent. */
  async lineage(
    db: Db,
    id: string,
  ): Promise<Pick<ExecutionRow, 'mode' | 'depth' | 'parent_execution_id'> | undefined> {
    return db
      .selectFrom('executions')
      .select(['mode', 'depth', 'parent_execution_id'])
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** Where a child stands, and what it ended with. */
  async outcome(
    db: Db,
    id: string,
  ): Promise<Pick<ExecutionRow, 'status' | 'steps' | 'error' | 'resume_state'> | undefined> {
    return db
      .selectFrom('executions')
      .select(['status', 'steps', 'error', 'resume_state'])
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /**
   * A child ended: its parent, when waiting, is due now (it resumes on whichever worker claims
   * it next). Whether it was waiting.
   */
  async wake(db: Db, parentId: string, now: string): Promise<boolean> {
    const res = await db
      .updateTable('executions')
      .set({ run_after: now })
      .where('id', '=', parentId)
      .where('status', '=', 'waiting')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },
};
