/**
 * What a trigger's health is read from (src/health): its accepted production calls (the
 * executions table: ids are time-ordered UUIDv7, so a time bound is an id bound on the
 * (workflow_id, id) index), its refusals counted per minute and code, and its alert episodes.
 */
import { sql } from 'kysely';
import type { RefusalCountsTable, TriggerAlertsTable } from './schema.js';
import type { Db } from './store.js';

/** The smallest UUIDv7 of a time (ms): every id made at or after it sorts at or after this one. */
export function idFloor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

export type TriggerAlertRow = TriggerAlertsTable;

export const triggerHealthRepo = {
  /** When the newest accepted production call of a workflow arrived (ISO), if any is kept. */
  async lastProductionCall(db: Db, workflowId: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('executions')
      .select('created_at')
      .where('workflow_id', '=', workflowId)
      .where('mode', '=', 'production')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.created_at;
  },

  /** Accepted production calls since `sinceMs`, per hour (`YYYY-MM-DDTHH`). */
  async productionCallsByHour(db: Db, workflowId: string, sinceMs: number): Promise<Map<string, number>> {
    const hour = sql<string>`substr(created_at, 1, 13)`;
    const rows = await db
      .selectFrom('executions')
      .select([hour.as('hour'), (eb) => eb.fn.countAll<number | string>().as('calls')])
      .where('workflow_id', '=', workflowId)
      .where('id', '>=', idFloor(sinceMs))
      .where('mode', '=', 'production')
      .groupBy(hour)
      .execute();
    return new Map(rows.map((r) => [r.hour, Number(r.calls)]));
  },

  /** Trigger items of production calls accepted after the id `afterId`, oldest first. */
  async productionItemsAfter(
    db: Db,
    workflowId: string,
    afterId: string,
    limit: number,
  ): Promise<{ id: string; workflow_version: number; trigger: string }[]> {
    return db
      .selectFrom('executions')
      .select(['id', 'workflow_version', 'trigger'])
      .where('workflow_id', '=', workflowId)
      .where('id', '>', afterId)
      .where('mode', '=', 'production')
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
  },

  /** Adds counted refusals, one upsert per (workflow, minute, code). */
  async addRefusals(db: Db, rows: readonly RefusalCountsTable[]): Promise<void> {
    for (const row of rows) {
      await db
        .insertInto('refusal_counts')
        .values(row)
        .onConflict((oc) =>
          oc
            .columns(['workflow_id', 'minute', 'code'])
            .doUpdateSet({ count: sql`refusal_counts.count + ${row.count}` }),
        )
        .execute();
    }
  },

  /** Refusals of a workflow from `fromMinute` on (ISO minutes compare as text), per minute and code. */
  async refusalsSince(db: Db, workflowId: string, fromMinute: string): Promise<RefusalCountsTable[]> {
    const rows = await db
      .selectFrom('refusal_counts')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .where('minute', '>=', fromMinute)
      .execute();
    return rows.map((r) => ({ ...r, count: Number(r.count) }));
  },

  async deleteRefusalsBefore(db: Db, minute: string): Promise<void> {
    await db.deleteFrom('refusal_counts').where('minute', '<', minute).execute();
  },

  /** Opens an episode; false when another process (or an earlier sweep) opened it first. */
  async openAlert(db: Db, row: TriggerAlertRow): Promise<boolean> {
    const res = await db
      .insertInto('trigger_alerts')
      .values(row)
      .onConflict((oc) => oc.columns(['workflow_id', 'kind', 'episode']).doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0n) > 0;
  },

  async setAlertExecution(db: Db, key: AlertKey, executionId: string): Promise<void> {
    await db
      .updateTable('trigger_alerts')
      .set({ execution_id: executionId })
      .where('workflow_id', '=', key.workflowId)
      .where('kind', '=', key.kind)
      .where('episode', '=', key.episode)
      .execute();
  },

  /** The newest episode of a kind, to tell whether one is still going on. */
  async latestAlert(db: Db, workflowId: string, kind: string): Promise<TriggerAlertRow | undefined> {
    return db
      .selectFrom('trigger_alerts')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .where('kind', '=', kind)
      .orderBy('fired_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  },

  async touchAlert(db: Db, key: AlertKey, lastSeen: string): Promise<void> {
    await db
      .updateTable('trigger_alerts')
      .set({ last_seen: lastSeen })
      .where('workflow_id', '=', key.workflowId)
      .where('kind', '=', key.kind)
      .where('episode', '=', key.episode)
      .execute();
  },

  /** A workflow's alerts, newest first. */
  async listAlerts(db: Db, workflowId: string, limit: number): Promise<TriggerAlertRow[]> {
    return db
      .selectFrom('trigger_alerts')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .orderBy('fired_at', 'desc')
      .limit(limit)
      .execute();
  },

  async deleteAlertsBefore(db: Db, at: string): Promise<void> {
    await db.deleteFrom('trigger_alerts').where('last_seen', '<', at).execute();
  },
};

export interface AlertKey {
  workflowId: string;
  kind: string;
  episode: string;
}
