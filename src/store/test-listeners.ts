/**
 * Test listeners (SPEC 3, 8; webhooks/test-listener.ts decides when one opens, closes and is
 * consumed): one row per listening workflow with its expiry. A row whose `expires_at` has passed
 * listens no more, whether or not it was deleted yet.
 */
import type { TestListenerRow, WorkflowRow } from './schema.js';
import type { Db } from './store.js';

/** An open listener with its workflow's row (the test registry's entry: webhooks/triggers.ts). */
export type ListenerWithWorkflow = WorkflowRow & {
  listener_id: string;
  keep_listening: number;
  expires_at: string;
};

export const testListenersRepo = {
  async insert(db: Db, row: TestListenerRow): Promise<void> {
    await db.insertInto('test_listeners').values(row).execute();
  },

  /** The workflow's listener row, expired or not. */
  async getOf(db: Db, workflowId: string): Promise<TestListenerRow | undefined> {
    return db
      .selectFrom('test_listeners')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .executeTakeFirst();
  },

  /** The workflow's listener if it is open at `now` (ISO-8601). */
  async openOf(db: Db, workflowId: string, now: string): Promise<TestListenerRow | undefined> {
    return db
      .selectFrom('test_listeners')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  },

  /** Every listener open at `now`, each with its workflow's row. */
  async listOpen(db: Db, now: string): Promise<ListenerWithWorkflow[]> {
    return db
      .selectFrom('test_listeners')
      .innerJoin('workflows', 'workflows.id', 'test_listeners.workflow_id')
      .selectAll('workflows')
      .select(['test_listeners.id as listener_id', 'keep_listening', 'expires_at'])
      .where('expires_at', '>', now)
      .execute();
  },

  /** Whether the workflow has a listener open at `now`. */
  async isListening(db: Db, workflowId: string, now: string): Promise<boolean> {
    const row = await db
      .selectFrom('test_listeners')
      .select('id')
      .where('workflow_id', '=', workflowId)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row !== undefined;
  },

  /** The workflows other than `workflowId` with a listener open at `now`: id, name, draft trigger (JSON). */
  async openElsewhere(
    db: Db,
    workflowId: string,
    now: string,
  ): Promise<{ id: string; name: string; trigger: string }[]> {
    return db
      .selectFrom('test_listeners')
      .innerJoin('workflows', 'workflows.id', 'test_listeners.workflow_id')
      .select(['workflows.id', 'workflows.name', 'workflows.trigger'])
      .where('test_listeners.expires_at', '>', now)
      .where('workflows.id', '!=', workflowId)
      .execute();
  },

  /** Whether the listener `id` is open at `at`. */
  async isOpen(db: Db, id: string, at: string): Promise<boolean> {
    const row = await db
      .selectFrom('test_listeners')
      .select('id')
      .where('id', '=', id)
      .where('expires_at', '>', at)
      .executeTakeFirst();
    return row !== undefined;
  },

  /** Deletes the listener `id` if it is open at `at`; whether it was (a one-shot listener's capture). */
  async consume(db: Db, id: string, at: string): Promise<boolean> {
    const res = await db
      .deleteFrom('test_listeners')
      .where('id', '=', id)
      .where('expires_at', '>', at)
      .executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  },

  async deleteOf(db: Db, workflowId: string): Promise<void> {
    await db.deleteFrom('test_listeners').where('workflow_id', '=', workflowId).execute();
  },

  /** Deletes the listeners expired at `now`. */
  async deleteExpired(db: Db, now: string): Promise<void> {
    await db.deleteFrom('test_listeners').where('expires_at', '<=', now).execute();
  },
};
