/** Captured test events (SPEC 8): the trigger item of each test call, newest first by id. */
import type { TestEventRow } from './schema.js';
import type { Db } from './store.js';

export const testEventsRepo = {
  async insert(db: Db, row: TestEventRow): Promise<void> {
    await db.insertInto('test_events').values(row).execute();
  },

  /** Newest first; `before` is the id of the last item of the previous page. */
  async list(
    db: Db,
    workflowId: string,
    opts: { limit: number; before?: string | undefined },
  ): Promise<TestEventRow[]> {
    let q = db
      .selectFrom('test_events')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .orderBy('id', 'desc')
      .limit(opts.limit);
    if (opts.before) q = q.where('id', '<', opts.before);
    return q.execute();
  },

  async get(db: Db, workflowId: string, id: string): Promise<TestEventRow | undefined> {
    return db
      .selectFrom('test_events')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .where('id', '=', id)
      .executeTakeFirst();
  },
};
