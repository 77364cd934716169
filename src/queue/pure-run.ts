/**
 * A workflow of pure steps (no network, nothing outside the execution) may run before its
 * execution is stored, and the row is then inserted finished: one row write per request instead of
 * an insert, a claim and an update (see webhooks/ingest.ts). It runs on the event loop
 * (Worker.offer).
 *
 * The event loop serves every request, so a run there only gets a short slice (the engine enforces it as JSONata
 * evaluates, RunContext.sliceMs) and only for small items (parsing and copying a big one cannot
 * be interrupted). A run that does not fit is abandoned: its row is inserted `queued`, as it came,
 * and the executor runs it off the event loop with the whole execution budget
 * (engine-runner.ts). That costs the one execution a second write, and nobody else anything.
 * (A 3 MB body with four `$count(items[price > N])` fields held the writer thread, and
 * every other request's commit, for 1.3–3 s.) The same for a record too big to write here
 * (PURE_MAX_RECORD_BYTES): a small item can make a big one (a `forEach` copying a field of the
 * request into each element), and the executor's thread writes it instead.
 */
import { type Engine, OutOfSlice, type RunResult } from '../engine/run.js';
import { nowIso } from '../ids.js';
import { recordJson } from '../model/record-json.js';
import type { NewExecutionRow } from '../store/schema.js';
import type { Workflow } from '../model/workflow.js';
import { andThen, type MaybePromise } from '../shared/maybe-promise.js';

/**
 * The time one workflow may run before its commit. Pure workflows typically take 10–100 µs; one
 * that needs more than 5 ms is heavy and goes to the executor. Wall time, so a thread the OS
 * deschedules spends its slice too: on a loaded machine a few light runs are deferred for nothing.
 */
export const PURE_SLICE_MS = 5;

/**
 * Items (trigger JSON) above this size are not run before the commit: JSON.parse, copies and
 * results of them cost more than the slice, and nothing can interrupt those (a 64 KiB item parses
 * in ~0.3 ms; a 3 MB one in ~30 ms). The same bound as the executor's hand-over (worker.ts).
 */
export const PURE_MAX_ITEM_CHARS = 64 * 1024;

/**
 * Records (as JSON) above this size are not written here: the run is abandoned as if it had not
 * fitted in its slice, and the executor's thread runs it again and writes its record. Measured
 * without writing (model/record-json.ts `JsonSizer`), so a run whose values are far bigger as JSON
 * than in memory costs the event loop only this much: 256 KiB is ~1 ms of JSON.stringify.
 */
export const PURE_MAX_RECORD_BYTES = 256 * 1024;

/**
 * Runs `workflow` on `item` within `sliceMs` and fills `row` in finished (status, steps, error,
 * times); returns false, with `row` untouched (still `queued`), when the item is too big or the
 * run did not fit in the slice. An engine crash is a failed execution; `onCrash` hears of it.
 */
export function runPure(
  engine: Engine,
  workflow: Workflow,
  row: NewExecutionRow,
  item: unknown,
  onCrash: (err: unknown) => void,
  sliceMs: number = PURE_SLICE_MS,
): MaybePromise<boolean> {
  if (row.trigger.length > PURE_MAX_ITEM_CHARS || sliceMs <= 0) return false;
  const startedAt = nowIso();
  if (workflow.steps.length === 0) {
    // Nothing to run: what the engine would answer, without its promise and compiled version (and
    // without one here: the caller awaits only a promise).
    row.status = 'succeeded';
    row.steps = '[]';
    row.error = null;
    row.started_at = row.finished_at = startedAt;
    return true;
  }
  const maxBytes = Math.min(engine.recordMaxBytes, PURE_MAX_RECORD_BYTES);
  // The result itself, not a promise, when every step answers at once (Engine.run): set → filter →
  // set runs with no async function and no microtask turn.
  return andThen(
    engine.run(workflow, item, { executionId: row.id, mode: row.mode, attempt: row.attempt ?? 1, sliceMs }),
    (result) => finish(row, result, startedAt, maxBytes),
    (err) => {
      const result = crashed(err, onCrash);
      return result !== false && finish(row, result, startedAt, maxBytes);
    },
  );
}

/** What a run that threw comes to: false when it gave its slice up, else a failed run. */
function crashed(err: unknown, onCrash: (err: unknown) => void): RunResult | false {
  if (err instanceof OutOfSlice) return false;
  onCrash(err);
  return failedRun(err instanceof Error ? err.message : String(err));
}

function finish(row: NewExecutionRow, result: RunResult, startedAt: string, maxBytes: number): boolean {
  // Not expected: `wait` is not pure; the executor runs (and parks) it.
  if (result.status === 'waiting') return false;
  // Nothing left out here: a record past the bound goes to the executor's thread whole.
  const record = recordJson(result.steps, maxBytes, { strict: true });
  if (record === undefined) return false;
  fillFinished(row, { ...result, record }, startedAt);
  return true;
}

/**
 * Fills `row` in finished with `result`, as the executor records one (Queue.complete): its
 * `record` (the engine thread's, or `finish`'s), else its `steps`, which are then few (a failure
 * before any step ran).
 */
export function fillFinished(row: NewExecutionRow, result: RunResult, startedAt: string): void {
  row.status = result.status;
  row.steps = result.record ?? recordJson(result.steps, PURE_MAX_RECORD_BYTES)!;
  row.error = result.error === null || result.error === undefined ? null : JSON.stringify(result.error);
  row.started_at = startedAt;
  row.finished_at = nowIso();
}

export const failedRun = (message: string): RunResult & { status: 'failed' } => ({
  status: 'failed',
  steps: [],
  error: { message },
  output: null,
});
