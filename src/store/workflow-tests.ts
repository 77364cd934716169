/** Tests from captured traffic (src/workflow-tests): one workflow's, by id. */
import type { WorkflowTestsTable } from './schema.js';
import type { Db } from './store.js';

export type WorkflowTestRow = WorkflowTestsTable;

export const workflowTestsRepo = {
  async insert(db: Db, row: WorkflowTestRow): Promise<void> {
    await db.insertInto('workflow_tests').values(row).execute();
  },
  /** A workflow's tests, oldest first (the order they were made and run in). */
  async list(db: Db, workflowId: string): Promise<WorkflowTestRow[]> {
    return db
      .selectFrom('workflow_tests')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .orderBy('id')
      .execute();
  },
  async get(db: Db, workflowId: string, id: string): Promise<WorkflowTestRow | undefined> {
    return db
      .selectFrom('workflow_tests')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .where('id', '=', id)
      .executeTakeFirst();
  },
  async update(
    db: Db,
    workflowId: string,
    id: string,
    patch: Partial<Pick<WorkflowTestRow, 'name' | 'item' | 'mocks' | 'expected' | 'updated_at'>>,
  ): Promise<void> {
    await db
      .updateTable('workflow_tests')
      .set(patch)
      .where('workflow_id', '=', workflowId)
      .where('id', '=', id)
      .execute();
  },
  async delete(db: Db, workflowId: string, id: string): Promise<boolean> {
    const res = await db
      .deleteFrom('workflow_tests')
      .where('workflow_id', '=', workflowId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  },
};
