/**
 * The `code` step's sandbox (SPEC 7b): JavaScript (ES2023) run by QuickJS compiled to
 * WebAssembly (quickjs-emscripten). The code lives in the WebAssembly module's own memory and sees
 * only what is handed in as JSON: no Node.js object crosses the boundary, so there is no
 * `require`, `import`, `fetch`, `process`, file or timer to reach (QuickJS without its `std`/`os`
 * modules has none). What it offers: the ECMAScript built-ins, `Date`, `Math.random`, and
 * `console.log` (kept as the step's `logs`).
 *
 * Cost. Loading the module takes ~80 ms and ~10 MB, so it is loaded on first use, per thread
 * (only the executor's engine thread runs code steps: they are not pure; the event loop loads it
 * to check a saved workflow's syntax). One QuickJS runtime (its heap, with the memory limit) is
 * kept and reused; every run gets a fresh context (its own globals: one run cannot leave anything
 * behind for the next), ~0.3 ms. Runs are synchronous, so one runtime never serves two at once.
 *
 * Limits. The runtime's memory limit makes an allocation past it throw inside the sandbox (an
 * `InternalError: out of memory`, not a crash of the process); the interrupt handler stops a run
 * past its time. After an out-of-memory run the module is dropped and loaded again on next use:
 * WebAssembly memory only grows, and the next run should not start from a 64 MB heap. Near the
 * memory limit QuickJS collects garbage on every allocation that fails, and a built-in looping
 * natively (`new Array(1e5).fill(0)` over and over) checks no interrupt: such a run can overrun its
 * time limit by seconds (measured: 7 s at 16 MB) before it runs out of memory. The executor's
 * watchdog (queue/engine-runner.ts) still stops the thread past the execution's budget.
 */
import type { QuickJSContext, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten';
import { DeadlineReached } from './expressions.js';

/** `console.log` lines kept per run. */
export const MAX_CODE_LOGS = 100;
const MAX_LOG_LINE_CHARS = 2_000;
/** QuickJS's own stack limit (runaway recursion is a RangeError, not a crash). */
const MAX_STACK_BYTES = 512 * 1024;
const FILE = 'code.js';
/** The user's code is the body of this function; its line 1 is line 2 of what QuickJS runs. */
const HEAD = '(function ($input, $trigger, $steps, $execution) {\n';
const TAIL = '\n})';

/** Names code commonly reaches for that the sandbox does not have, and what to say about them. */
const ABSENT = new Set([
  'require',
  'process',
  'fetch',
  'setTimeout',
  'setInterval',
  'setImmediate',
  'clearTimeout',
  'clearInterval',
  'queueMicrotask',
  'Buffer',
  'XMLHttpRequest',
  'module',
  'exports',
  '__dirname',
  '__filename',
  'globalThis.process',
]);
const ABSENT_HINT =
  'The code step runs in a sandbox without require, import, fetch, process, files or timers: it gets $input, $trigger, $steps and $execution, and returns a value.';

// Set up once per context, before the user's code (its own file name, so positions stay the
// user's). console.log formats as Node does for the common cases: strings as they are, the rest as
// JSON (String() for what JSON cannot show).
const PRELUDE = `(() => {
  const send = globalThis.__hookflowLog;
  delete globalThis.__hookflowLog;
  const show = (v) => {
    if (typeof v === 'string') return v;
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol' || typeof v === 'bigint') return String(v);
    if (v instanceof Error) return String(v);
    try { const t = JSON.stringify(v); return t === undefined ? String(v) : t; } catch { return String(v); }
  };
  const log = (...args) => { send(args.map(show).join(' ')); };
  globalThis.console = Object.freeze({ log, info: log, warn: log, error: log, debug: log });
})();`;

let loading: Promise<QuickJSWASMModule> | undefined;
let loaded: QuickJSWASMModule | undefined;
let runtime: QuickJSRuntime | undefined;

/** Load the WebAssembly module (once per thread); `checkSyntax` needs it loaded. */
export function loadCodeSandbox(): Promise<void> {
  loading ??= import('quickjs-emscripten')
    .then((q) => q.newQuickJSWASMModule())
    .then((m) => (loaded = m))
    .catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
  return loading.then(() => undefined);
}

export function codeSandboxLoaded(): boolean {
  return loaded !== undefined;
}

export interface CodeError {
  message: string;
  /** 1-based, in the user's source; absent when QuickJS gave no position. */
  line?: number;
  column?: number;
}

/** The syntax error of a code step's source, or undefined. Needs `loadCodeSandbox()` first. */
export function checkSyntax(source: string): CodeError | undefined {
  if (!loaded) throw new Error('checkSyntax: the code sandbox is not loaded (await loadCodeSandbox() first)');
  const ctx = loaded.newContext();
  try {
    const result = ctx.evalCode(HEAD + source + TAIL, FILE, { compileOnly: true });
    if (!result.error) {
      result.value.dispose();
      return undefined;
    }
    const err = dumpError(ctx, result.error);
    result.error.dispose();
    return err;
  } finally {
    ctx.dispose();
  }
}

export interface CodeRun {
  source: string;
  input: unknown;
  trigger: unknown;
  steps: unknown;
  execution: unknown;
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
  await loadCodeSandbox();
  const logs: string[] = [];
  const rt = sandboxRuntime(run.memoryBytes);
  const started = Date.now();
  const stopAt = Math.min(started + run.timeoutMs, run.until ?? Infinity);
  rt.setInterruptHandler(() => Date.now() > stopAt);
  let ctx: QuickJSContext | undefined;
  let outOfMemory = false;
  try {
    ctx = rt.newContext();
    const c = ctx;
    const send = c.newFunction('log', (line) => {
      if (logs.length < MAX_CODE_LOGS) {
        const text = c.getString(line);
        logs.push(text.length > MAX_LOG_LINE_CHARS ? `${text.slice(0, MAX_LOG_LINE_CHARS - 1)}…` : text);
      }
    });
    c.setProp(c.global, '__hookflowLog', send);
    send.dispose();
    c.unwrapResult(c.evalCode(PRELUDE, 'prelude.js')).dispose();

    // Deep copies by construction: JSON in, parsed inside the sandbox.
    const args = c.newString(
      JSON.stringify([run.input ?? null, run.trigger ?? null, run.steps ?? {}, run.execution ?? null]),
    );
    c.setProp(c.global, '__hookflowArgs', args);
    args.dispose();
    const code = `${HEAD}${run.source}${TAIL}.apply(undefined, (() => { const a = JSON.parse(globalThis.__hookflowArgs); delete globalThis.__hookflowArgs; return a; })())`;
    const result = c.evalCode(code, FILE);
    if (result.error) {
      const error = dumpError(c, result.error);
      result.error.dispose();
      if (error.message.startsWith('InternalError: interrupted')) {
        if (run.until !== undefined && Date.now() >= run.until && run.until < started + run.timeoutMs)
          throw new DeadlineReached();
        return { ok: false, error: { ...error, message: timeoutMessage(run.timeoutMs) }, logs };
      }
      if (error.message.startsWith('InternalError: out of memory')) {
        outOfMemory = true;
        return {
          ok: false,
          error: {
            ...error,
            message: `The code used more than its memory limit of ${Math.round(run.memoryBytes / 1048576)} MB (HOOKFLOW_CODE_MEMORY_MB) and was stopped.`,
          },
          logs,
        };
      }
      return { ok: false, error, logs };
    }
    // The result as JSON, made inside the sandbox (a getter or toJSON runs there, under its limits).
    const json = c.getProp(c.global, 'JSON');
    const stringify = c.getProp(json, 'stringify');
    const text = c.callFunction(stringify, json, result.value);
    stringify.dispose();
    json.dispose();
    result.value.dispose();
    if (text.error) {
      const error = dumpError(c, text.error);
      text.error.dispose();
      return {
        ok: false,
        error: { message: `The returned value cannot be made JSON: ${error.message}` },
        logs,
      };
    }
    const out = c.typeof(text.value) === 'string' ? c.getString(text.value) : undefined;
    text.value.dispose();
    return { ok: true, value: out === undefined ? null : JSON.parse(out), logs };
  } catch (err) {
    if (err instanceof DeadlineReached) throw err;
    // The module itself failed (a WebAssembly trap, memory that could not grow): start afresh.
    outOfMemory = true;
    return {
      ok: false,
      error: { message: `The code sandbox failed: ${err instanceof Error ? err.message : String(err)}` },
      logs,
    };
  } finally {
    try {
      ctx?.dispose();
    } catch {
      outOfMemory = true;
    }
    rt.removeInterruptHandler();
    if (outOfMemory) dropSandbox();
  }
}

function timeoutMessage(ms: number): string {
  return `The code ran longer than its limit of ${ms} ms (HOOKFLOW_CODE_TIMEOUT_MS) and was stopped.`;
}

function sandboxRuntime(memoryBytes: number): QuickJSRuntime {
  if (!runtime) {
    runtime = loaded!.newRuntime();
    runtime.setMaxStackSize(MAX_STACK_BYTES);
  }
  runtime.setMemoryLimit(memoryBytes);
  return runtime;
}

/** Forget the runtime and the module (their memory goes with them); the next run loads afresh. */
function dropSandbox(): void {
  try {
    runtime?.dispose();
  } catch {
    // A runtime left inconsistent by a failure: it is dropped with its module anyway.
  }
  runtime = undefined;
  loaded = undefined;
  loading = undefined;
}

/** An error thrown inside the sandbox: `Name: message` and the first position in the user's code. */
function dumpError(ctx: QuickJSContext, handle: Parameters<QuickJSContext['dump']>[0]): CodeError {
  let value: unknown;
  try {
    value = ctx.dump(handle);
  } catch {
    value = undefined;
  }
  // QuickJS throws null when it cannot even allocate the error (out of memory); `throw null` too.
  if (value === null || value === undefined)
    return { message: 'InternalError: out of memory (or the code threw null)' };
  if (typeof value !== 'object') return { message: `Uncaught ${safeString(value)}` };
  const e = value as { name?: unknown; message?: unknown; stack?: unknown };
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const text = typeof e.message === 'string' ? e.message : safeString(value);
  let message = `${name}: ${text}`;
  const missing = /^'?([\w.$]+)'? is not defined$/.exec(text)?.[1];
  if (name === 'ReferenceError' && missing && ABSENT.has(missing)) message += `. ${ABSENT_HINT}`;
  const at = typeof e.stack === 'string' ? /code\.js:(\d+):(\d+)/.exec(e.stack) : null;
  if (!at) return { message };
  // Line 1 of what ran is the function's head; the user's line 1 is its line 2.
  const line = Math.max(1, Number(at[1]) - 1);
  return { message, line, column: Number(at[2]) };
}

function safeString(v: unknown): string {
  try {
    return typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  } catch {
    return String(v);
  }
}
