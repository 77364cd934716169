/**
 * The audit log (SPEC 11b): who changed what, when, from where. A service that changes something
 * takes the caller's `Audit` (actor and client address) and writes the row with `record` inside
 * the transaction of the change: the change and its row are committed together or not at all.
 * `details` never holds a secret: callers put names, versions and roles there, never values.
 */
import { newId, nowIso, type Page, toPage } from '../ids.js';
import { type AuditFilter, type AuditRow, auditRepo } from '../store/audit.js';
import type { Db, Store } from '../store/store.js';
import type { AuditAction } from '../shared/audit-actions.js';

export interface AuditActor {
  type: 'user' | 'token' | 'system';
  /** The member's or the token's id; null for the system. */
  id: string | null;
  /** The member's email, the token's name, or what the system did it for. */
  name: string;
}

/** Who asks for a change and from where: handed to the service that makes it. */
export interface Audit {
  actor: AuditActor;
  ip: string | null;
}

export interface AuditTarget {
  type: string;
  id: string | null;
  name?: string | null | undefined;
}

export interface AuditEvent {
  action: AuditAction;
  target: AuditTarget;
  /** The workflow the change is about (the list's workflowId filter). */
  workflowId?: string | undefined;
  details?: Record<string, unknown> | undefined;
}

export interface AuditEntry {
  id: string;
  at: string;
  actor: AuditActor;
  action: string;
  target: { type: string; id: string | null; name: string | null };
  details: Record<string, unknown>;
  ip: string | null;
}

/** Changes the operator makes from the command line, and the server's own. */
export const SYSTEM: Audit = { actor: { type: 'system', id: null, name: 'hookflow' }, ip: null };

/** Writes the row of `event` in `db` (the change's transaction). Without `audit`, nothing. */
export async function record(db: Db, audit: Audit | undefined, event: AuditEvent): Promise<void> {
  if (!audit) return;
  await auditRepo.insert(db, {
    id: newId(),
    at: nowIso(),
    actor_type: audit.actor.type,
    actor_id: audit.actor.id,
    actor_name: audit.actor.name,
    action: event.action,
    target_type: event.target.type,
    target_id: event.target.id,
    target_name: event.target.name ?? null,
    workflow_id: event.workflowId ?? (event.target.type === 'workflow' ? event.target.id : null),
    details: JSON.stringify(event.details ?? {}),
    ip: audit.ip,
  });
}

const toEntry = (row: AuditRow): AuditEntry => ({
  id: row.id,
  at: row.at,
  actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
  action: row.action,
  target: { type: row.target_type, id: row.target_id, name: row.target_name },
  details: JSON.parse(row.details) as Record<string, unknown>,
  ip: row.ip,
});

export class AuditLog {
  readonly #store: Store;
  readonly #maxAgeMs: number | undefined;
  readonly #now: () => number;

  constructor({
    store,
    maxAgeMs,
    now = Date.now,
  }: { store: Store; maxAgeMs: number | undefined; now?: () => number }) {
    this.#store = store;
    this.#maxAgeMs = maxAgeMs;
    this.#now = now;
  }

  /**
   * Newest first. Rows past HOOKFLOW_AUDIT_MAX_AGE are deleted first: the log is only read by
   * admins now and then, and the delete finds nothing to do through the `at` index most times.
   */
  async list(filter: Omit<AuditFilter, 'limit'> & { limit: number }): Promise<Page<AuditEntry>> {
    await this.prune();
    const rows = await auditRepo.list(this.#store.db, { ...filter, limit: filter.limit + 1 });
    return toPage(rows, filter.limit, toEntry);
  }

  /** Deletes the rows older than the retention; the number deleted. */
  async prune(): Promise<number> {
    if (this.#maxAgeMs === undefined) return 0;
    const cutoff = new Date(this.#now() - this.#maxAgeMs).toISOString();
    return auditRepo.deleteBefore(this.#store.db, cutoff);
  }
}
