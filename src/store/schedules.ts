/**
 * The live schedules and their claimed ticks (SPEC 7f; src/schedules owns the rules). A tick is
 * claimed by inserting (workflow, scheduled_at) if absent, in the transaction that queues its
 * execution: the insert that loses the race inserts nothing, on SQLite and PostgreSQL alike.
 */
import type { ScheduleRow } from './schema.js';
import type { Db } from './store.js';

export const schedulesRepo = {
  async list(db: Db): Promise<ScheduleRow[]> {
    return db.selectFrom('schedules').selectAll().orderBy('workflow_id').execute();
  },

  async get(db: Db, workflowId: string): Promise<ScheduleRow | undefined> {
    return db.selectFrom('schedules').selectAll().where('workflow_id', '=', workflowId).executeTakeFirst();
  },

  /**
   * The live schedule, read to claim one of its ticks. `lock` (a store shared by processes, where a
   * row lock exists): FOR SHARE, so a deactivation (which deletes the row) waits for claims in
   * flight and a claim after it finds no row: no tick starts once deactivate has answered. SQLite
   * needs none: it has one writer at a time.
   */
  async getToClaim(db: Db, workflowId: string, lock: boolean): Promise<ScheduleRow | undefined> {
    const q = db.selectFrom('schedules').selectAll().where('workflow_id', '=', workflowId);
    return (lock ? q.forShare() : q).executeTakeFirst();
  },

  /** The live schedules of these workflows (for `trigger.nextRunAt`). */
  async getMany(db: Db, workflowIds: readonly string[]): Promise<ScheduleRow[]> {
    if (workflowIds.length === 0) return [];
    return db.selectFrom('schedules').selectAll().where('workflow_id', 'in', workflowIds).execute();
  },

  /** Insert or replace the workflow's live schedule. */
  async put(db: Db, row: ScheduleRow): Promise<void> {
    const { workflow_id: _id, ...rest } = row;
    await db
      .insertInto('schedules')
      .values(row)
      .onConflict((oc) => oc.column('workflow_id').doUpdateSet(rest))
      .execute();
  },

  async delete(db: Db, workflowId: string): Promise<void> {
    await db.deleteFrom('schedules').where('workflow_id', '=', workflowId).execute();
  },

  /** The latest claimed tick of the workflow (ISO), if any. */
  async lastTick(db: Db, workflowId: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('schedule_ticks')
      .select('scheduled_at')
      .where('workflow_id', '=', workflowId)
      .orderBy('scheduled_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.scheduled_at;
  },

  /** Claim a tick: true when this call inserted it, false when it was claimed already. */
  async claimTick(
    db: Db,
    tick: { workflow_id: string; scheduled_at: string; execution_id: string; fired_at: string },
  ): Promise<boolean> {
    const res = await db
      .insertInto('schedule_ticks')
      .values(tick)
      .onConflict((oc) => oc.columns(['workflow_id', 'scheduled_at']).doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0n) > 0;
  },

  /** Forget the workflow's claims older than `before` (ISO). */
  async pruneTicks(db: Db, workflowId: string, before: string): Promise<void> {
    await db
      .deleteFrom('schedule_ticks')
      .where('workflow_id', '=', workflowId)
      .where('scheduled_at', '<', before)
      .execute();
  },
};
