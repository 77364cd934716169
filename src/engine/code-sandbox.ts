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
 * to check a saved workflow's syntax). A fresh QuickJS context per run cost ~0.3 ms (1 ms on a
 * loaded machine), more than the rest of a run, so one runtime and one context are kept and
 * reused: a run compiles its function (~0.05 ms) and calls it through the context's runner.
 * Reuse is made safe by freezing every object reachable from the global object when the context
 * is made (as SES's lockdown does): a run cannot leave a global, a patched prototype or a
 * changed built-in behind for the next (assignments to them are ignored, or throw in strict
 * code); the few prototype properties code commonly shadows by assignment (`this.name` in an
 * Error subclass, `o.toString`) are made assignable on the object. Runs are synchronous, so the
 * context never serves two at once. Measured: a trivial code step ~0.1 ms per run (0.37 ms at a
 * load average of 13 on 2 cores, where a one-field `set` step took 0.17 ms).
 *
 * Limits. The interrupt handler stops a run past its time. Memory: QuickJS's own limit
 * (setMemoryLimit) refuses single allocations past it but its running total misses most
 * allocations in this build, so the module's WebAssembly memory is created with a maximum (the
 * limit + 32 MiB: `loadCodeSandbox`) — an allocation past it fails inside QuickJS — and its size
 * is checked by the interrupt handler and after the run (`heapBytes`). An out-of-memory run
 * fails its step (never the process), and the module is dropped and loaded again on next use
 * (WebAssembly memory only grows; the next run should not start from a 64 MB heap); an
 * interrupted run's context is dropped. A built-in looping natively
 * checks no interrupt, so one call can overrun the time limit by its own duration; with the capped
 * memory, `new Array(1e5).fill(0)` in an endless loop stops at the limit in ~0.3 s (7 s uncapped,
 * collecting garbage on every failing allocation). The executor's watchdog
 * (queue/engine-runner.ts) still stops the thread past the execution's budget.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten';
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

// Set up once per context (its own file name, so positions stay the user's): console.log, which
// formats as Node does for the common cases (strings as they are, the rest as JSON, String() for
// what JSON cannot show), then every object reachable from the global object is frozen, so that
// one run can leave nothing behind for the next in the reused context (see the header). Evaluates
// to the runner: it parses the inputs, calls the user's function and returns its result as JSON.
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
  globalThis.console = { log, info: log, warn: log, error: log, debug: log };
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const apply = Reflect.apply;
  // The "override mistake": assigning a property that a frozen prototype holds (\`this.name = …\` in
  // an Error subclass, \`o.toString = …\`) would be silently ignored. For those commonly assigned,
  // the prototype's property becomes an accessor that defines the property on the object instead
  // (as SES's override taming does).
  const tame = (proto, key) => {
    const d = Object.getOwnPropertyDescriptor(proto, key);
    if (!d || !('value' in d)) return;
    const value = d.value;
    Object.defineProperty(proto, key, {
      get() { return value; },
      set(v) {
        if (this === proto) throw new TypeError('Cannot change a built-in prototype in the code sandbox');
        Object.defineProperty(this, key, { value: v, writable: true, enumerable: true, configurable: true });
      },
      enumerable: d.enumerable,
      configurable: false,
    });
  };
  for (const key of ['toString', 'valueOf', 'toLocaleString', 'constructor', 'hasOwnProperty']) tame(Object.prototype, key);
  for (const E of [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError])
    for (const key of ['name', 'message', 'constructor', 'toString']) tame(E.prototype, key);
  for (const key of ['toString', 'constructor']) tame(Function.prototype, key);
  const seen = new Set();
  const harden = (o) => {
    if ((typeof o !== 'object' && typeof o !== 'function') || o === null || seen.has(o)) return;
    seen.add(o);
    Object.freeze(o);
    harden(Object.getPrototypeOf(o));
    for (const key of Reflect.ownKeys(o)) {
      const d = Object.getOwnPropertyDescriptor(o, key);
      if ('value' in d) harden(d.value);
      else { harden(d.get); harden(d.set); }
    }
  };
  harden(globalThis);
  return (fn, json) => {
    const out = stringify(apply(fn, undefined, parse(json)));
    return out === undefined ? 'null' : out;
  };
})()`;

let loading: Promise<QuickJSWASMModule> | undefined;
let loaded: QuickJSWASMModule | undefined;
let runtime: QuickJSRuntime | undefined;
/** The reused context, its runner function (PRELUDE), and where its console.log lines go. */
let sandbox: { ctx: QuickJSContext; runner: QuickJSHandle } | undefined;
let logs: string[] = [];
/** The module's memory when it was loaded (the sandbox's limit is on top of it). */
let heapBaseline = 0;

/** The memory limit when none is given (HOOKFLOW_CODE_MEMORY_MB's default). */
const DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024;
const PAGE = 64 * 1024;
/** The module's own initial memory (its Emscripten build's INITIAL_MEMORY: 16 MiB). */
const INITIAL_PAGES = 256;
/** Room past the limit for QuickJS's own structures and the allocator's fragmentation. */
const SLACK_PAGES = 256;
/** The memory limit the loaded (or loading) module's WebAssembly memory is capped for. */
let cappedFor: number | undefined;

/**
 * Load the WebAssembly module (once per thread, again for another memory limit); `checkSyntax`
 * needs it loaded. Its WebAssembly memory is created here with a maximum (initial + the limit +
 * slack): growing past it fails the allocation inside QuickJS (out of memory) instead of letting
 * the heap grow to the 2 GB the build allows — measured without the cap: a loop of 1 MB typed
 * arrays took the thread to 2.1 GB RSS before the interrupt handler ran; with it, 145 MB.
 */
export function loadCodeSandbox(memoryBytes = DEFAULT_MEMORY_BYTES): Promise<void> {
  if (!loading) {
    cappedFor = memoryBytes;
    loading = import('quickjs-emscripten')
      .then((q) => {
        const maximum = INITIAL_PAGES + Math.ceil(memoryBytes / PAGE) + SLACK_PAGES;
        // The WebAssembly global (this project's TypeScript lib has no types for it).
        const { Memory } = (
          globalThis as unknown as {
            WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => unknown };
          }
        ).WebAssembly;
        const wasmMemory = new Memory({ initial: INITIAL_PAGES, maximum });
        type Options = NonNullable<Parameters<typeof q.newVariant>[1]>;
        return q.newQuickJSWASMModuleFromVariant(
          q.newVariant(q.RELEASE_SYNC, { wasmMemory: wasmMemory as Options['wasmMemory'] }),
        );
      })
      .then((m) => {
        loaded = m;
        heapBaseline = heapBytes();
        return m;
      })
      .catch((err: unknown) => {
        loading = undefined;
        cappedFor = undefined;
        throw err;
      });
  }
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
  // The module's memory is capped for one limit: another limit (another engine in this thread,
  // as in tests) loads it afresh.
  for (let tries = 0; tries < 3 && (!loaded || cappedFor !== run.memoryBytes); tries++) {
    if (loading && cappedFor !== run.memoryBytes) {
      await loading.catch(() => undefined);
      dropSandbox();
    }
    await loadCodeSandbox(run.memoryBytes);
  }
  if (!loaded) await loadCodeSandbox(run.memoryBytes);
  const runLogs: string[] = [];
  logs = runLogs;
  const started = Date.now();
  const stopAt = Math.min(started + run.timeoutMs, run.until ?? Infinity);
  // Interrupted, out of memory or broken: the context (or the whole module) is not reused.
  let drop: 'context' | 'module' | undefined;
  let overMemory = false;
  let rt: QuickJSRuntime | undefined;
  let fn: QuickJSHandle | undefined;
  try {
    rt = sandboxRuntime(run.memoryBytes);
    const { ctx, runner } = sandboxContext(rt);
    const heapLimit = heapBaseline + run.memoryBytes;
    rt.setInterruptHandler(() => {
      if (heapBytes() > heapLimit) overMemory = true;
      return overMemory || Date.now() > stopAt;
    });
    const compiled = ctx.evalCode(HEAD + run.source + TAIL, FILE);
    if (compiled.error) {
      const error = dumpError(ctx, compiled.error);
      compiled.error.dispose();
      return { ok: false, error, logs: runLogs };
    }
    fn = compiled.value;
    // Deep copies by construction: JSON in, parsed inside the sandbox; the result JSON comes out.
    const args = ctx.newString(
      JSON.stringify([run.input ?? null, run.trigger ?? null, run.steps ?? {}, run.execution ?? null]),
    );
    const result = ctx.callFunction(runner, ctx.undefined, fn, args);
    args.dispose();
    if (result.error) {
      const error = dumpError(ctx, result.error);
      result.error.dispose();
      if (error.message.startsWith('InternalError: out of memory') || overMemory) {
        drop = 'module';
        return { ok: false, error: { ...error, message: memoryMessage(run.memoryBytes) }, logs: runLogs };
      }
      if (error.message.startsWith('InternalError: interrupted')) {
        drop = 'context';
        if (run.until !== undefined && Date.now() >= run.until && run.until < started + run.timeoutMs)
          throw new DeadlineReached();
        return { ok: false, error: { ...error, message: timeoutMessage(run.timeoutMs) }, logs: runLogs };
      }
      if (/^TypeError: .*(BigInt|circular)/i.test(error.message))
        return {
          ok: false,
          error: { message: `The returned value cannot be made JSON: ${error.message}` },
          logs: runLogs,
        };
      return { ok: false, error, logs: runLogs };
    }
    const text = ctx.getString(result.value);
    result.value.dispose();
    // Grown past the limit inside one native call (no interrupt check ran meanwhile).
    if (heapBytes() > heapLimit) {
      drop = 'module';
      return { ok: false, error: { message: memoryMessage(run.memoryBytes) }, logs: runLogs };
    }
    return { ok: true, value: JSON.parse(text), logs: runLogs };
  } catch (err) {
    if (err instanceof DeadlineReached) throw err;
    // The module itself failed (a WebAssembly trap, memory that could not grow): start afresh.
    drop = 'module';
    return {
      ok: false,
      error: { message: `The code sandbox failed: ${err instanceof Error ? err.message : String(err)}` },
      logs: runLogs,
    };
  } finally {
    try {
      fn?.dispose();
      rt?.removeInterruptHandler();
    } catch {
      drop = 'module';
    }
    logs = [];
    if (drop === 'context') dropContext();
    else if (drop === 'module') dropSandbox();
  }
}

function memoryMessage(bytes: number): string {
  return `The code used more than its memory limit of ${Math.round(bytes / 1048576)} MB (HOOKFLOW_CODE_MEMORY_MB) and was stopped.`;
}

/**
 * The WebAssembly memory's size. QuickJS's own limit (setMemoryLimit) refuses a single allocation
 * past it, but in this build its running total misses most allocations (64 typed arrays of 1 MB
 * passed a 16 MB limit, with 200 MB in use): the size of the module's memory is what is checked,
 * by the interrupt handler and after the run. Read from the Emscripten module's heap view (not a
 * public API of quickjs-emscripten 0.32; 0 if it moves, leaving QuickJS's own limit alone).
 */
function heapBytes(): number {
  const heap = (loaded as unknown as { module?: { HEAPU8?: Uint8Array } } | undefined)?.module?.HEAPU8;
  return heap?.byteLength ?? 0;
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

/** The reused context: console.log, frozen globals, the runner (PRELUDE); made on first use. */
function sandboxContext(rt: QuickJSRuntime): { ctx: QuickJSContext; runner: QuickJSHandle } {
  if (sandbox) return sandbox;
  const ctx = rt.newContext();
  try {
    const send = ctx.newFunction('log', (line) => {
      if (logs.length < MAX_CODE_LOGS) {
        const text = ctx.getString(line);
        logs.push(text.length > MAX_LOG_LINE_CHARS ? `${text.slice(0, MAX_LOG_LINE_CHARS - 1)}…` : text);
      }
    });
    ctx.setProp(ctx.global, '__hookflowLog', send);
    send.dispose();
    const runner = ctx.unwrapResult(ctx.evalCode(PRELUDE, 'prelude.js'));
    sandbox = { ctx, runner };
    return sandbox;
  } catch (err) {
    ctx.dispose();
    throw err;
  }
}

/** Forget the reused context (after a run was interrupted: its state is not trusted). */
function dropContext(): void {
  try {
    sandbox?.runner.dispose();
    sandbox?.ctx.dispose();
  } catch {
    // Disposed with the runtime if need be.
  }
  sandbox = undefined;
}

/** Forget the runtime and the module (their memory goes with them); the next run loads afresh. */
function dropSandbox(): void {
  dropContext();
  try {
    runtime?.dispose();
  } catch {
    // A runtime left inconsistent by a failure: it is dropped with its module anyway.
  }
  runtime = undefined;
  loaded = undefined;
  loading = undefined;
  cappedFor = undefined;
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
