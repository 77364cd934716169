/**
 * The schema learned from a workflow's test events (SPEC 8), one row per workflow. The store keeps
 * its JSON text; webhooks/schema/ infers and merges it.
 */
import type { Db } from './store.js';

export const learnedSchemasRepo = {
  /** The schema's JSON text, if one was learned. */
  async get(db: Db, workflowId: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('learned_schemas')
      .select('schema')
      .where('workflow_id', '=', workflowId)
      .executeTakeFirst();
    return row?.schema;
  },

  /** Inserts or replaces the workflow's schema (JSON text). */
  async put(db: Db, workflowId: string, schema: string, at: string): Promise<void> {
    await db
      .insertInto('learned_schemas')
      .values({ workflow_id: workflowId, schema, updated_at: at })
      .onConflict((oc) => oc.column('workflow_id').doUpdateSet({ schema, updated_at: at }))
      .execute();
  },
};
