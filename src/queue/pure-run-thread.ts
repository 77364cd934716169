/**
 * Loaded by SQLite's writer thread (store/sqlite/writer-thread.ts) when the process runs an
 * executor: runs pure workflows before their rows are inserted (see pure-run.ts), reading workflow
 * versions through the thread's own connection. Versions never change once saved, so they are
 * cached (VersionCache, as the executor does; the engine caches their compiled form).
 */
import type SqliteDatabase from 'better-sqlite3';
import { Engine } from '../engine/run.js';
import type { NewExecutionRow } from '../store/schema.js';
import { parseDefinition } from '../store/workflows.js';
import type { Workflow } from '../model/workflow.js';
import {
  failedRun,
  PURE_BATCH_SLICE_MS,
  PURE_MAX_ITEM_CHARS,
  PURE_SLICE_MS,
  type PureRunOptions,
  runPure,
} from './pure-run.js';
import { VersionCache } from './versions.js';

/**
 * Fills `row` in finished, if it fits in what is left of the slice of the batch whose runs began
 * at `batchStart` (epoch ms); returns what to log on the event loop, if anything, and `deferred`
 * when it did not run it (the row is left as it came, `queued`: see pure-run.ts).
 */
export type PureRunner = (
  row: NewExecutionRow,
  batchStart: number,
) => Promise<{ crash?: string; deferred?: true }>;

export function createRunner(database: SqliteDatabase.Database, options: PureRunOptions): PureRunner {
  const engine = new Engine(options);
  warmUp(engine);
  const versions = new VersionCache();
  const select = database.prepare(
    'select definition from workflow_versions where workflow_id = ? and version = ?',
  );
  const version = (id: string, v: number): Workflow | undefined => {
    const cached = versions.cached(id, v);
    if (cached) return cached;
    const found = select.get(id, v) as { definition: string } | undefined;
    return versions.keep(id, v, found ? parseDefinition(found.definition) : undefined);
  };
  return async (row, batchStart) => {
    // One run gets PURE_SLICE_MS at most, and the batch's runs together PURE_BATCH_SLICE_MS: every
    // request in the batch waits for its commit.
    const sliceMs = Math.min(PURE_SLICE_MS, batchStart + PURE_BATCH_SLICE_MS - Date.now());
    // Checked before parsing: a big item's parse alone would take longer than the slice.
    if (sliceMs <= 0 || row.trigger.length > PURE_MAX_ITEM_CHARS) return { deferred: true };
    let crash: string | undefined;
    const workflow = version(row.workflow_id, row.workflow_version);
    if (!workflow) {
      const failed = failedRun(
        `Workflow ${row.workflow_id} version ${row.workflow_version} no longer exists.`,
      );
      row.status = failed.status;
      row.error = JSON.stringify(failed.error);
      row.started_at = row.finished_at = new Date().toISOString();
      return {};
    }
    const ran = await runPure(
      engine,
      workflow,
      row,
      JSON.parse(row.trigger),
      (err) => {
        crash = err instanceof Error ? (err.stack ?? err.message) : String(err);
      },
      sliceMs,
    );
    if (!ran) return { deferred: true };
    return crash === undefined ? {} : { crash };
  };
}

/**
 * A fresh thread's first run paid for compiling the engine's and JSONata's code (V8 compiles
 * functions lazily) and took longer than a slice even on an idle machine, so the first requests
 * after every start were deferred to the executor. One run of the kinds of step and expression that
 * pure workflows use, as the thread starts, pays that before a request waits on it.
 */
function warmUp(engine: Engine): void {
  const workflow = {
    id: 'warm-up',
    version: 1,
    steps: [
      { name: 'a', type: 'set', fields: { x: '{{ body.a }}', y: '{{ $uppercase(body.a) & "!" }}' } },
      { name: 'b', type: 'filter', condition: '{{ x = "a" and $count(body.list[$ > 1]) > 0 }}' },
      { name: 'c', type: 'set', keepInput: true, fields: { z: '{{ $string(y) }}' } },
    ],
  } as unknown as Workflow;
  const item = { body: { a: 'a', list: [1, 2, 3] } };
  for (let i = 0; i < 3; i++) {
    engine.run(workflow, item, { executionId: 'warm-up', mode: 'test' }).catch(() => undefined);
  }
}
