/**
 * A workflow of pure steps (no network, nothing outside the execution) may run before its
 * execution is stored, and the row is then inserted finished: one row write per request instead of
 * an insert, a claim and an update (see webhooks/ingest.ts). It runs on the event loop
 * (Worker.runBeforeCommit), or, on SQLite, on the writer thread that inserts it
 * (pure-run-thread.ts), off the event loop.
 */
import type { Engine, EngineOptions, RunResult } from '../engine/run.js';
import { nowIso } from '../ids.js';
import { stepsJson } from '../store/executions.js';
import type { NewExecutionRow } from '../store/schema.js';
import type { Workflow } from '../workflows/model.js';

/** What the thread's engine needs from config.engine (pure steps never reach the network). */
export type PureRunOptions = Pick<EngineOptions, 'allowPrivateNetwork' | 'executionTimeoutMs'>;

/**
 * Runs `workflow` on `item` and fills `row` in finished (status, steps, error, times). An engine
 * crash is a failed execution; `onCrash` hears of it.
 */
export async function runPure(
  engine: Engine,
  workflow: Workflow,
  row: NewExecutionRow,
  item: unknown,
  onCrash: (err: unknown) => void,
): Promise<void> {
  const startedAt = nowIso();
  if (workflow.steps.length === 0) {
    // Nothing to run (what the engine would answer, without its promise and compiled version).
    row.status = 'succeeded';
    row.steps = '[]';
    row.error = null;
    row.started_at = row.finished_at = startedAt;
    return;
  }
  let result: RunResult;
  try {
    result = await engine.run(workflow, item, {
      executionId: row.id,
      mode: row.mode,
      attempt: row.attempt ?? 1,
    });
  } catch (err) {
    onCrash(err);
    result = failedRun(err instanceof Error ? err.message : String(err));
  }
  row.status = result.status;
  row.steps = stepsJson(result.steps);
  row.error = result.error === null ? null : JSON.stringify(result.error);
  row.started_at = startedAt;
  row.finished_at = nowIso();
}

export const failedRun = (message: string): RunResult => ({
  status: 'failed',
  steps: [],
  error: { message },
  output: null,
});
