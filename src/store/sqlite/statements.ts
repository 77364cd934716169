/**
 * The hot statements' SQL and parameters on SQLite, shared by the event loop's connection
 * (store.ts) and the writer thread's (writer-thread.ts).
 */
import { EXECUTION_INSERT_COLUMNS, executionInsertValues, type SqlValue } from '../execution-insert.js';
import type { ExecutionFieldRow } from '../schema.js';
import type { ExecutionCompletion } from '../store.js';

export const INSERT_EXECUTION = `insert into executions (${EXECUTION_INSERT_COLUMNS.map(([c]) => c).join(', ')})
  values (${EXECUTION_INSERT_COLUMNS.map(() => '?').join(', ')})`;

/** A searchable field of the execution just inserted (execution-search.ts). */
export const INSERT_EXECUTION_FIELD =
  'insert into execution_fields (workflow_id, path, value, execution_id) values (?, ?, ?, ?)';

export const COMPLETE_EXECUTION = `update executions
  set status = ?, steps = ?, error = ?, finished_at = ?, run_after = coalesce(?, run_after),
    resume_state = ?, locked_by = null, locked_until = null
  where id = ? and locked_by = ?`;

/** A checkpoint part of the execution just parked (store.ts CheckpointPart). */
export const INSERT_CHECKPOINT_PART =
  'insert into execution_checkpoints (execution_id, seq, state, records) values (?, ?, ?, ?)';

/** The checkpoint parts of an execution that finished. */
export const DELETE_CHECKPOINT_PARTS = 'delete from execution_checkpoints where execution_id = ?';

export type { SqlValue };

export const insertParams = executionInsertValues;

export function completeParams(c: ExecutionCompletion): SqlValue[] {
  return [c.status, c.steps, c.error, c.finishedAt, c.runAfter, c.resumeState, c.id, c.lockedBy];
}

/** The parameters of INSERT_CHECKPOINT_PART for a completion that parks, else undefined. */
export function partParams(c: ExecutionCompletion): SqlValue[] | undefined {
  const p = c.checkpointPart;
  return p ? [c.id, p.seq, p.state, p.records] : undefined;
}

export function fieldParams(f: ExecutionFieldRow): SqlValue[] {
  return [f.workflow_id, f.path, f.value, f.execution_id];
}
