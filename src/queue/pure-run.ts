/**
 * A workflow of pure steps (no network, nothing outside the execution) may run before its
 * execution is stored, and the row is then inserted finished: one row write per request instead of
 * an insert, a claim and an update (see webhooks/ingest.ts). It runs on the event loop
 * (Worker.runBeforeCommit), or, on SQLite, on the writer thread that inserts it
 * (pure-run-thread.ts), off the event loop.
 *
 * Either place is shared: the event loop serves every request, and the writer thread commits
 * every request's row. So a run there only gets a short slice (the engine enforces it as JSONata
 * evaluates, RunContext.sliceMs) and only for small items (parsing and copying a big one cannot
 * be interrupted). A run that does not fit is abandoned: its row is inserted `queued`, as it came,
 * and the executor runs it off the event loop with the whole execution budget
 * (engine-runner.ts). That costs the one execution a second write, and nobody else anything.
 * (Issue 14: a 3 MB body with four `$count(items[price > N])` fields held the writer thread, and
 * every other request's commit, for 1.3–3 s.)
 */
import { type Engine, type EngineOptions, OutOfSlice, type RunResult } from '../engine/run.js';
import { nowIso } from '../ids.js';
import { stepsJson } from '../store/executions.js';
import type { NewExecutionRow } from '../store/schema.js';
import type { Workflow } from '../model/workflow.js';

/** What the thread's engine needs from config.engine (pure steps never reach the network). */
export type PureRunOptions = Pick<
  EngineOptions,
  'allowPrivateNetwork' | 'executionTimeoutMs' | 'foreachMaxItems'
>;

/**
 * The time one workflow may run before its commit. Pure workflows typically take 10–100 µs; one
 * that needs more than 5 ms is heavy and goes to the executor. Wall time, so a thread the OS
 * deschedules spends its slice too: on a loaded machine a few light runs are deferred for nothing.
 */
export const PURE_SLICE_MS = 5;

/**
 * On the writer thread, what a batch's runs may take together: every request of the batch waits
 * for them. 5 ms per batch (not per run) deferred light runs under load: with 50 connections a
 * batch holds ~50 runs, and the bench's workflow case dropped from 0.56–0.77× to 0.43× of the
 * durable floor (p99 157–263 ms). 25 ms stays far inside the 200 ms a request may wait.
 */
export const PURE_BATCH_SLICE_MS = 25;

/**
 * Items (trigger JSON) above this size are not run before the commit: JSON.parse, copies and
 * results of them cost more than the slice, and nothing can interrupt those (a 64 KiB item parses
 * in ~0.3 ms; a 3 MB one in ~30 ms). The same bound as the executor's hand-over (worker.ts).
 */
export const PURE_MAX_ITEM_CHARS = 64 * 1024;

/**
 * Runs `workflow` on `item` within `sliceMs` and fills `row` in finished (status, steps, error,
 * times); returns false, with `row` untouched (still `queued`), when the item is too big or the
 * run did not fit in the slice. An engine crash is a failed execution; `onCrash` hears of it.
 */
export async function runPure(
  engine: Engine,
  workflow: Workflow,
  row: NewExecutionRow,
  item: unknown,
  onCrash: (err: unknown) => void,
  sliceMs: number = PURE_SLICE_MS,
): Promise<boolean> {
  if (row.trigger.length > PURE_MAX_ITEM_CHARS || sliceMs <= 0) return false;
  const startedAt = nowIso();
  if (workflow.steps.length === 0) {
    // Nothing to run (what the engine would answer, without its promise and compiled version).
    row.status = 'succeeded';
    row.steps = '[]';
    row.error = null;
    row.started_at = row.finished_at = startedAt;
    return true;
  }
  let result: RunResult;
  try {
    result = await engine.run(workflow, item, {
      executionId: row.id,
      mode: row.mode,
      attempt: row.attempt ?? 1,
      sliceMs,
    });
  } catch (err) {
    if (err instanceof OutOfSlice) return false;
    onCrash(err);
    result = failedRun(err instanceof Error ? err.message : String(err));
  }
  // Not expected: `wait` is not pure; the executor runs (and parks) it.
  if (result.status === 'waiting') return false;
  row.status = result.status;
  row.steps = stepsJson(result.steps);
  row.error = result.error === null ? null : JSON.stringify(result.error);
  row.started_at = startedAt;
  row.finished_at = nowIso();
  return true;
}

export const failedRun = (message: string): RunResult & { status: 'failed' } => ({
  status: 'failed',
  steps: [],
  error: { message },
  output: null,
});
