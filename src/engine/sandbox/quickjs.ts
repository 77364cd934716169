/**
 * QuickJS compiled to WebAssembly (quickjs-emscripten), as a code thread uses it (code-thread.ts):
 * one module, one runtime and one reused context per thread, a run at a time. The event loop loads
 * the module too, for `checkSyntax` only (compile, never run).
 *
 * Cost. Loading the module takes ~80 ms and ~10 MB. A fresh context costs ~0.3 ms, and ~15–25 ms
 * hardened (prelude.ts freezes ~600 objects), far more than a run, so one context is kept and
 * reused: a run compiles its function (~0.05 ms) and calls it through the context's runner, which
 * froze everything a run could reach when the context was made. Runs are synchronous, so the
 * context never serves two at once; a trivial one takes ~0.04 ms here.
 *
 * Limits. The interrupt handler stops a run past its time (and the execution's deadline) at the
 * next bytecode boundary and keeps the thread; what one native call does (JSON.parse of a hostile
 * body, `includes` on a long string) is stopped by the thread's owner, which terminates the thread
 * (threads.ts). Memory: QuickJS's own limit (setMemoryLimit) refuses single allocations past it,
 * but its running total misses most allocations in this build, so the module's WebAssembly memory
 * is created with a maximum (the limit + 32 MiB: `loadCodeSandbox`) — an allocation past it fails
 * inside QuickJS — and its size is checked by the interrupt handler and after the run
 * (`heapBytes`). An out-of-memory run fails its step, and the module is dropped and loaded again
 * on next use (WebAssembly memory only grows; the next run should not start from a 64 MB heap); an
 * interrupted run's context is dropped, and so are the context and runtime of a run that left
 * promise jobs queued (never run: nothing calls executePendingJobs, but they would hold memory).
 * With the capped memory, `new Array(1e5).fill(0)` in an endless loop stops at the limit in
 * ~0.3 s (7 s uncapped, collecting garbage on every failing allocation).
 *
 * Stack. Compiling and running recurse through WebAssembly frames on the thread's own stack,
 * while QuickJS's stack limit (setMaxStackSize) counts the module's shadow stack: ~25 times
 * less per level of nested brackets. With no QuickJS limit, 800 nested `[` overflowed the event
 * loop's ~1 MB stack (a host RangeError out of the module, which leaves it unusable); a 16 KiB
 * limit makes QuickJS refuse first, at 200–400 levels, for every form tried (brackets,
 * calls, templates, blocks, arrows, functions). Runs get 512 KiB in a code thread whose stack is
 * 64 MB (code-thread's resourceLimits), so QuickJS's limit is the one that trips there too.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten';
import { HEAD, NO_INPUT, PRELUDE, SEED_INPUT, TAIL, THREW } from './prelude.js';

/** `console.log` lines kept per run. */
export const MAX_CODE_LOGS = 100;
const MAX_LOG_LINE_CHARS = 2_000;
/** QuickJS's own stack limit for runs (runaway recursion is a RangeError, not a crash). */
const MAX_STACK_BYTES = 512 * 1024;
/** QuickJS's stack limit for `checkSyntax` on the event loop (see the header). */
const CHECK_STACK_BYTES = 16 * 1024;
const FILE = 'code.js';

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
  'The code step runs in a sandbox without require, import, fetch, process, files or timers: it gets $input, $trigger, $steps and $execution (and $item, $index inside a forEach), and returns a value.';

export interface CodeError {
  message: string;
  /** 1-based, in the user's source; absent when QuickJS gave no position. */
  line?: number;
  column?: number;
}

/** One run, as a code thread receives it. */
export interface CodeJob {
  id: number;
  source: string;
  /**
   * `$input`, `$trigger`, `$steps`, `$execution`, `$item`, `$index` (INPUT_NAMES) as JSON text,
   * parsed inside QuickJS if read; NO_INPUT for one that is not there (`$item` outside a loop).
   */
  inputs: string[];
  memoryBytes: number;
  timeoutMs: number;
  /** Epoch ms: the execution's own deadline. */
  until?: number | undefined;
}

/**
 * A run's outcome, as a code thread answers: the returned value as JSON text, or the error; or
 * `deadline` when the execution's deadline (not the step's limit) stopped it.
 */
export type CodeReply = {
  id: number;
  logs: string[];
  /**
   * The run left the sandbox to be made again (its context, runtime or module dropped): the thread
   * does that now and says 'ready' when done, and its owner posts nothing to it meanwhile, so that
   * no run's time limit pays for it.
   */
  rebuilding?: true;
} & (
  | { ok: true; json: string }
  | { ok: false; error: CodeError; deadline?: undefined }
  | { ok: false; deadline: true; error?: undefined }
);

export function timeoutMessage(ms: number): string {
  return `The code ran longer than its limit of ${ms} ms (HOOKFLOW_CODE_TIMEOUT_MS) and was stopped.`;
}

export function memoryMessage(bytes: number): string {
  return `The code used more than its memory limit of ${Math.round(bytes / 1048576)} MB (HOOKFLOW_CODE_MEMORY_MB) and was stopped.`;
}

let loading: Promise<QuickJSWASMModule> | undefined;
let loaded: QuickJSWASMModule | undefined;
let runtime: QuickJSRuntime | undefined;
/** The reused context and its runner function (PRELUDE). */
let sandbox: { ctx: QuickJSContext; runner: QuickJSHandle } | undefined;
/** The run in progress: its inputs (read by `$input` & co. on first use) and its logs. */
let current: { inputs: readonly string[]; logs: string[] } | undefined;
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

/**
 * The syntax error of a code step's source, or undefined. Needs `loadCodeSandbox()` first.
 * Compile only, on the calling thread, in a runtime of its own with a small stack limit (see the
 * header). Its cost grows with the source (at most 100 000 characters, steps/code.ts): ~80 ms
 * for 4 096 random identifiers, ~480 ms when all their names collide in QuickJS's atom hash —
 * bounded by the source's size, and only the workflow's own author can save one.
 */
export function checkSyntax(source: string): CodeError | undefined {
  if (!loaded) throw new Error('checkSyntax: the code sandbox is not loaded (await loadCodeSandbox() first)');
  const rt = loaded.newRuntime();
  rt.setMaxStackSize(CHECK_STACK_BYTES);
  let ctx: QuickJSContext | undefined;
  try {
    ctx = rt.newContext();
    const result = ctx.evalCode(HEAD + source + TAIL, FILE, { compileOnly: true });
    if (!result.error) {
      result.value.dispose();
      return undefined;
    }
    const err = dumpError(ctx, result.error);
    result.error.dispose();
    return err;
  } catch (err) {
    // Not expected with the stack limit above; a module that failed mid-call is not trusted again
    // (validateStepsAsync loads it afresh).
    ctx = undefined;
    dropSandbox();
    return { message: `SyntaxError: the code could not be compiled (${errorText(err)})` };
  } finally {
    try {
      ctx?.dispose();
      rt.dispose();
    } catch {
      dropSandbox();
    }
  }
}

/**
 * Loads the module and makes the runtime and the reused context now (a code thread does before it
 * says it is ready, at its start and after a run that dropped them): the PRELUDE's hardening walks
 * ~600 objects, 15–25 ms (~100 ms the first time in a module, while V8 still compiles its code),
 * and loading takes ~80 ms, which the next run's time limit would otherwise pay for.
 */
export async function warmCodeSandbox(memoryBytes: number): Promise<void> {
  if (loaded && cappedFor !== memoryBytes) dropSandbox();
  if (!loaded) await loadCodeSandbox(memoryBytes);
  sandboxContext(sandboxRuntime(memoryBytes));
}

/** Whether the next run with this memory limit finds the module, runtime and context made. */
export function codeSandboxWarm(memoryBytes: number): boolean {
  return loaded !== undefined && cappedFor === memoryBytes && sandbox !== undefined;
}

/** Runs one job (loading the module, capped for its memory limit, when needed). */
export async function runJob(job: CodeJob): Promise<CodeReply> {
  if (loaded && cappedFor !== job.memoryBytes) dropSandbox();
  if (!loaded) await loadCodeSandbox(job.memoryBytes);
  return runLoaded(job);
}

function runLoaded(job: CodeJob): CodeReply {
  const { id } = job;
  const logs: string[] = [];
  current = { inputs: job.inputs, logs };
  const started = Date.now();
  const stopAt = Math.min(started + job.timeoutMs, job.until ?? Number.POSITIVE_INFINITY);
  // Interrupted, out of memory, broken or with jobs left queued: not reused.
  let drop: 'context' | 'runtime' | 'module' | undefined;
  let overMemory = false;
  let rt: QuickJSRuntime | undefined;
  let fn: QuickJSHandle | undefined;
  const memory = (): CodeReply => {
    drop = 'module';
    return { id, ok: false, error: { message: memoryMessage(job.memoryBytes) }, logs };
  };
  try {
    rt = sandboxRuntime(job.memoryBytes);
    const { ctx, runner } = sandboxContext(rt);
    const heapLimit = heapBaseline + job.memoryBytes;
    rt.setInterruptHandler(() => {
      if (heapBytes() > heapLimit) overMemory = true;
      return overMemory || Date.now() > stopAt;
    });
    const compiled = ctx.evalCode(HEAD + job.source + TAIL, FILE);
    if (compiled.error) {
      const error = dumpError(ctx, compiled.error);
      compiled.error.dispose();
      return { id, ok: false, error, logs };
    }
    fn = compiled.value;
    const result = ctx.callFunction(runner, ctx.undefined, fn);
    if (rt.hasPendingJob()) drop = 'runtime';
    if (result.error) {
      const error = dumpError(ctx, result.error);
      result.error.dispose();
      if (error.message.startsWith('InternalError: out of memory') || overMemory) return memory();
      if (error.message.startsWith('InternalError: interrupted')) {
        drop = drop ?? 'context';
        if (job.until !== undefined && Date.now() >= job.until && job.until < started + job.timeoutMs)
          return { id, ok: false, deadline: true, logs };
        return { id, ok: false, error: { ...error, message: timeoutMessage(job.timeoutMs) }, logs };
      }
      if (/^TypeError: .*(BigInt|circular)/i.test(error.message))
        return {
          id,
          ok: false,
          error: { message: `The returned value cannot be made JSON: ${error.message}` },
          logs,
        };
      return { id, ok: false, error, logs };
    }
    const text = ctx.getString(result.value);
    result.value.dispose();
    // Grown past the limit inside one native call (no interrupt check ran meanwhile).
    if (overMemory || heapBytes() > heapLimit) return memory();
    if (text.startsWith(THREW))
      return { id, ok: false, error: { message: `Uncaught ${text.slice(1)}` }, logs };
    return { id, ok: true, json: text, logs };
  } catch (err) {
    // The module itself failed (a WebAssembly trap, memory that could not grow, the thread's own
    // stack overflowing): start afresh.
    drop = 'module';
    return { id, ok: false, error: { message: `The code sandbox failed: ${errorText(err)}` }, logs };
  } finally {
    try {
      fn?.dispose();
      rt?.removeInterruptHandler();
    } catch {
      drop = 'module';
    }
    current = undefined;
    if (drop === 'context') dropContext();
    else if (drop === 'runtime') dropRuntime();
    else if (drop === 'module') dropSandbox();
  }
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

function sandboxRuntime(memoryBytes: number): QuickJSRuntime {
  if (!runtime) {
    runtime = loaded!.newRuntime();
    runtime.setMaxStackSize(MAX_STACK_BYTES);
  }
  runtime.setMemoryLimit(memoryBytes);
  return runtime;
}

/** The reused context: console.log, lazy inputs, frozen intrinsics, the runner (PRELUDE). */
function sandboxContext(rt: QuickJSRuntime): { ctx: QuickJSContext; runner: QuickJSHandle } {
  if (sandbox) return sandbox;
  const ctx = rt.newContext();
  try {
    const send = ctx.newFunction('log', (line) => {
      const logs = current?.logs;
      if (logs && logs.length < MAX_CODE_LOGS) {
        const text = ctx.getString(line);
        logs.push(text.length > MAX_LOG_LINE_CHARS ? `${text.slice(0, MAX_LOG_LINE_CHARS - 1)}…` : text);
      }
    });
    ctx.setProp(ctx.global, '__hookflowLog', send);
    send.dispose();
    const input = ctx.newFunction('input', (which) => {
      const i = ctx.getNumber(which);
      if (i === SEED_INPUT) return ctx.newString(seeds());
      return ctx.newString(current?.inputs[i] ?? NO_INPUT);
    });
    ctx.setProp(ctx.global, '__hookflowInput', input);
    input.dispose();
    const runner = ctx.unwrapResult(ctx.evalCode(PRELUDE, 'prelude.js'));
    sandbox = { ctx, runner };
    return sandbox;
  } catch (err) {
    ctx.dispose();
    throw err;
  }
}

/** Four random 32-bit words for a run's Math.random, from the host's CSPRNG (taken 256 at a time). */
const seedWords = new Uint32Array(256);
let seedAt = seedWords.length;
function seeds(): string {
  if (seedAt + 4 > seedWords.length) {
    globalThis.crypto.getRandomValues(seedWords);
    seedAt = 0;
  }
  const s = seedWords.subarray(seedAt, seedAt + 4).join(',');
  seedAt += 4;
  return s;
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

/** Forget the context and the runtime (jobs a run left queued go with it). */
function dropRuntime(): void {
  dropContext();
  try {
    runtime?.dispose();
  } catch {
    // A runtime left inconsistent by a failure: it is dropped with its module anyway.
    loaded = undefined;
    loading = undefined;
    cappedFor = undefined;
  }
  runtime = undefined;
}

/** Forget the runtime and the module (their memory goes with them); the next run loads afresh. */
function dropSandbox(): void {
  dropRuntime();
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
  // The runner catches the code's own `throw null`; what reaches here as null is QuickJS failing
  // to allocate even the error.
  if (value === null || value === undefined) return { message: 'InternalError: out of memory' };
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

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
