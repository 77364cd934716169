import type { Db } from './store.js';
import type { ExecutionRow, ExecutionsTable, NewExecutionRow } from './schema.js';

export interface ExecutionFilter {
  workflowId?: string | undefined;
  status?: ExecutionsTable['status'] | undefined;
  mode?: ExecutionsTable['mode'] | undefined;
  before?: string | undefined;
  limit: number;
}

export const executionsRepo = {
  async insert(db: Db, row: NewExecutionRow): Promise<void> {
    await db.insertInto('executions').values(row).execute();
  },

  async get(db: Db, id: string): Promise<ExecutionRow | undefined> {
    return db.selectFrom('executions').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /** Newest first. */
  async list(db: Db, f: ExecutionFilter): Promise<ExecutionRow[]> {
    let q = db.selectFrom('executions').selectAll().orderBy('id', 'desc').limit(f.limit);
    if (f.workflowId) q = q.where('workflow_id', '=', f.workflowId);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.mode) q = q.where('mode', '=', f.mode);
    if (f.before) q = q.where('id', '<', f.before);
    return q.execute();
  },

  async count(db: Db, status: ExecutionsTable['status']): Promise<number> {
    const row = await db
      .selectFrom('executions')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('status', '=', status)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },
};
