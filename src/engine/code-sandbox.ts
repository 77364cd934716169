/**
 * The `code` step's sandbox (SPEC 7b): JavaScript (ES2023) run by QuickJS compiled to
 * WebAssembly (quickjs-emscripten), in a worker thread of its own. The code lives in the
 * WebAssembly module's memory and sees only what is handed in as JSON text: no Node.js object
 * crosses the boundary, so there is no `require`, `import`, `fetch`, `process`, file or timer to
 * reach (QuickJS without its `std`/`os` modules has none). What it offers: the ECMAScript
 * built-ins, `Date`, `Math.random`, and `console.log` (kept as the step's `logs`).
 *
 * What a run can cost, whatever its code and its input:
 * - Time: its limit (HOOKFLOW_CODE_TIMEOUT_MS, or the execution's deadline if sooner), then it is
 *   stopped: by QuickJS's interrupt handler at the next bytecode boundary, or, inside a native
 *   call that checks none, by ending its thread 50 ms past the limit (sandbox/threads.ts).
 *   Measured over HTTP on 2 loaded cores: a `code` step reading a body of 65 536 keys that
 *   collide in QuickJS's atom hash (32.5 s of JSON.parse uncut) and one `includes` over a 300 KB
 *   body (~10 s uncut) both failed 1 050–1 140 ms into their 1 000 ms limit.
 * - Other runs: nothing. Inputs are parsed on first read only (`return 1` never parses the body:
 *   sandbox/prelude.ts); the reused context is frozen, intrinsics reached only through syntax
 *   included, and Math.random is reseeded per run, so no run sees what another saw or left; a
 *   run cut off takes its thread with it, and other runs wait at most for its limit (a second
 *   thread takes them once the first has been held 50 ms).
 * - Memory: HOOKFLOW_CODE_MEMORY_MB of QuickJS heap (sandbox/quickjs.ts); the engine thread
 *   around it has HOOKFLOW_ENGINE_MEMORY_MB.
 *
 * Cost: the round trip to the code thread, ~0.05 ms a run, most of it waking a sleeping thread.
 * 2 000 runs of `return $input.a + 1` through the Engine in-process, alternated rounds at a load
 * average of 7–9 on 2 cores (medians): 0.19 ms a run before the code thread, 0.25 ms with it;
 * through the engine thread 8 at a time, 0.16 → 0.21 ms.
 */
import { DeadlineReached } from './expressions.js';
import type { CodeError } from './sandbox/quickjs.js';
import { NO_INPUT } from './sandbox/prelude.js';
import { codeThreads } from './sandbox/threads.js';

export { MAX_CODE_LOGS, checkSyntax, codeSandboxLoaded, loadCodeSandbox } from './sandbox/quickjs.js';
export type { CodeError };

export interface CodeRun {
  source: string;
  input: unknown;
  trigger: unknown;
  steps: unknown;
  execution: unknown;
  /** Inside a `forEach`: its element and index (`$item`, `$index`); absent outside any loop. */
  loop?: { item: unknown; index: number } | undefined;
  memoryBytes: number;
  timeoutMs: number;
  /** Epoch ms: the execution's own deadline (stops the run too: DeadlineReached). */
  until?: number | undefined;
}

export type CodeResult =
  | { ok: true; value: unknown; logs: string[] }
  | { ok: false; error: CodeError; logs: string[] };

/** Runs a code step's source; throws DeadlineReached when the execution's deadline stopped it. */
export async function runCode(run: CodeRun): Promise<CodeResult> {
  let inputs: string[];
  try {
    // Deep copies by construction: JSON text in (parsed inside the sandbox when read), JSON out.
    const input = json(run.input);
    inputs = [
      input,
      run.trigger === run.input ? input : json(run.trigger),
      json(run.steps ?? {}),
      json(run.execution),
      run.loop ? json(run.loop.item) : NO_INPUT,
      run.loop ? String(run.loop.index) : NO_INPUT,
    ];
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, error: { message: `The code's inputs cannot be made JSON: ${message}` }, logs: [] };
  }
  const reply = await codeThreads().run({
    id: 0,
    source: run.source,
    inputs,
    memoryBytes: run.memoryBytes,
    timeoutMs: run.timeoutMs,
    until: run.until,
  });
  if (reply.ok) return { ok: true, value: JSON.parse(reply.json), logs: reply.logs };
  if (reply.deadline) throw new DeadlineReached();
  return { ok: false, error: reply.error, logs: reply.logs };
}

/** JSON text already known for a value: the trigger item as stored (see `withJson`). */
const known = new WeakMap<object, string>();

/**
 * Remembers that `value` is `json` parsed (the engine thread does so for the trigger item, whose
 * stored JSON it receives): a code step hands that text to its sandbox instead of serialising the
 * value again (a body of 65 536 keys, 6.6 MB: 60–190 ms of the engine thread a step, on a loaded
 * machine). Returns `value`.
 */
export function withJson<T>(value: T, json: string): T {
  if (typeof value === 'object' && value !== null) known.set(value, json);
  return value;
}

function json(value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    const text = known.get(value);
    if (text !== undefined) return text;
  }
  return JSON.stringify(value ?? null) ?? 'null';
}
