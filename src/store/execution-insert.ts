/**
 * An execution row as the hot inserts write it, column by column: the one list both dialects'
 * statements follow (sqlite/statements.ts: a row's parameters; postgres/hot-writes.ts: one array
 * per column, unnested).
 */
import type { NewExecutionRow } from './schema.js';

export type SqlValue = string | number | null;

/** The columns and their PostgreSQL array types, in parameter order. */
export const EXECUTION_INSERT_COLUMNS = [
  ['id', 'text'],
  ['workflow_id', 'text'],
  ['workflow_version', 'int4'],
  ['mode', 'text'],
  ['status', 'text'],
  ['trigger', 'text'],
  ['steps', 'text'],
  ['error', 'text'],
  ['attempt', 'int4'],
  ['retry_of', 'text'],
  ['run_after', 'text'],
  ['locked_until', 'text'],
  ['locked_by', 'text'],
  ['created_at', 'text'],
  ['started_at', 'text'],
  ['finished_at', 'text'],
  ['warnings', 'text'],
  ['resume_state', 'text'],
  ['error_execution_id', 'text'],
] as const;

/** `r`'s values in EXECUTION_INSERT_COLUMNS' order, defaults filled in. */
export function executionInsertValues(r: NewExecutionRow): SqlValue[] {
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
    r.resume_state ?? null,
    r.error_execution_id ?? null,
  ];
}
