/**
 * Idempotency keys (SPEC 5b; webhooks/options/idempotency.ts): which execution a delivery with a
 * key started, until the key's window ends.
 */
import type { IdempotencyKeysTable } from './schema.js';
import type { Db } from './store.js';

export const idempotencyKeysRepo = {
  /** The execution the key started, while its window lasts at `now` (ISO-8601). */
  async find(db: Db, workflowId: string, key: string, now: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('idempotency_keys')
      .select('execution_id')
      .where('workflow_id', '=', workflowId)
      .where('key', '=', key)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row?.execution_id;
  },

  /** Writes the key, replacing an expired row of it. Give a transaction: it is two statements. */
  async replace(db: Db, row: IdempotencyKeysTable): Promise<void> {
    await db
      .deleteFrom('idempotency_keys')
      .where('workflow_id', '=', row.workflow_id)
      .where('key', '=', row.key)
      .execute();
    await db.insertInto('idempotency_keys').values(row).execute();
  },
};
