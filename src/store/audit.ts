/** The audit log (SPEC 11b; src/audit/audit.ts). */
import type { AuditLogTable } from './schema.js';
import type { Db } from './store.js';

export type AuditRow = AuditLogTable;

export interface AuditFilter {
  /** An actor's id (member, token) or, failing that, name. */
  actor?: string | undefined;
  action?: string | undefined;
  workflowId?: string | undefined;
  before?: string | undefined;
  limit: number;
}

export const auditRepo = {
  async insert(db: Db, row: AuditRow): Promise<void> {
    await db.insertInto('audit_log').values(row).execute();
  },

  /** Newest first. */
  async list(db: Db, filter: AuditFilter): Promise<AuditRow[]> {
    let q = db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(filter.limit);
    if (filter.before) q = q.where('id', '<', filter.before);
    if (filter.action) q = q.where('action', '=', filter.action);
    if (filter.workflowId) q = q.where('workflow_id', '=', filter.workflowId);
    const actor = filter.actor;
    if (actor) q = q.where((eb) => eb.or([eb('actor_id', '=', actor), eb('actor_name', '=', actor)]));
    return q.execute();
  },

  /** Deletes the rows older than `at` (retention); the number deleted. */
  async deleteBefore(db: Db, at: string): Promise<number> {
    const res = await db.deleteFrom('audit_log').where('at', '<', at).executeTakeFirst();
    return Number(res.numDeletedRows);
  },
};
