/**
 * The hot statements' SQL and parameters on SQLite, shared by the event loop's connection
 * (store.ts) and the writer thread's (writer-thread.ts).
 */
import type { ExecutionFieldRow, NewExecutionRow } from '../schema.js';
import type { ExecutionCompletion } from '../store.js';

export const INSERT_EXECUTION = `insert into executions (id, workflow_id, workflow_version, mode, status, trigger,
    steps, error, attempt, retry_of, run_after, locked_until, locked_by, created_at, started_at, finished_at, warnings)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** A searchable field of the execution just inserted (execution-search.ts). */
export const INSERT_EXECUTION_FIELD =
  'insert into execution_fields (workflow_id, path, value, execution_id) values (?, ?, ?, ?)';

export const COMPLETE_EXECUTION = `update executions
  set status = ?, steps = ?, error = ?, finished_at = ?, run_after = coalesce(?, run_after),
    resume_state = ?, locked_by = null, locked_until = null
  where id = ? and locked_by = ?`;

export type SqlValue = string | number | null;

export function insertParams(r: NewExecutionRow): SqlValue[] {
  return [
    r.id,
    r.workflow_id,
    r.workflow_version,
    r.mode,
    r.status,
    r.trigger,
    r.steps,
    r.error ?? null,
    r.attempt ?? 1,
    r.retry_of ?? null,
    r.run_after,
    r.locked_until ?? null,
    r.locked_by ?? null,
    r.created_at,
    r.started_at ?? null,
    r.finished_at ?? null,
    r.warnings ?? null,
  ];
}

export function completeParams(c: ExecutionCompletion): SqlValue[] {
  return [c.status, c.steps, c.error, c.finishedAt, c.runAfter, c.resumeState, c.id, c.lockedBy];
}

export function fieldParams(f: ExecutionFieldRow): SqlValue[] {
  return [f.workflow_id, f.path, f.value, f.execution_id];
}
