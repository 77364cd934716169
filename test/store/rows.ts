import { newId } from '../../src/ids.js';
import { queuedExecution } from '../../src/store/executions.js';
import type { NewExecutionRow } from '../../src/store/schema.js';

/** A queued execution, with the columns the insert leaves to their defaults, as it reads back. */
export function queuedRow(): NewExecutionRow {
  return {
    ...queuedExecution({
      id: newId(),
      workflow_id: 'wf',
      workflow_version: 1,
      mode: 'production',
      trigger: '{}',
      created_at: new Date().toISOString(),
    }),
    resume_state: null,
    error_execution_id: null,
    concurrency_key: null,
    concurrency_limit: null,
    newest_value: null,
    skip_reason: null,
    parent_execution_id: null,
    parent_step: null,
    depth: 0,
  };
}
