/**
 * The executor runs executions here, on a worker thread, not on the event loop. JSONata
 * evaluation is synchronous CPU work (its async evaluate only awaits microtasks; the hook in
 * engine/expressions.ts yields a turn every 10 ms, but parsing the item, copying and serialising
 * results cannot yield, nor can one built-in call): on the event loop a heavy execution delayed
 * every other request. Issue 14: a 3 MB item with four `$count(items[price > N])` fields and an
 * `http` step kept other webhooks waiting 530–780 ms and /healthz up to 480 ms (its intake
 * included); a backtracking regular expression blocked it until the regexp engine gave up.
 *
 * One thread runs any number of executions at once (those waiting on `http` steps interleave as
 * on the event loop; CPU-heavy ones share the thread's core). The event loop sends the workflow
 * and the trigger JSON as it is stored (a string copy; the thread parses it) and gets back the
 * result without step inputs (what the store records), and a `respond` step's response as soon
 * as it is known.
 *
 * Budget. The engine stops an execution at HOOKFLOW_EXECUTION_TIMEOUT_MS itself (between steps, as
 * JSONata evaluates, and by aborting `http` steps). What it cannot interrupt (one built-in call
 * that is slow by itself: a regular expression that backtracks catastrophically) is stopped here:
 * an execution not answered GRACE_MS past its budget has the thread terminated and started again.
 * It is failed with `execution_timeout`; the others that were running on the thread at that moment
 * are failed too, saying why (their effects, such as requests already sent, cannot be undone).
 */
import { Worker as Thread } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { EngineOptions, RunContext, RunResult } from '../engine/run.js';
import { threadModule } from '../thread-module.js';
import type { Workflow } from '../model/workflow.js';
import type { StepResponse } from '../bus/bus.js';

/** Past an execution's budget, how long the engine gets to stop it before the thread is. */
const GRACE_MS = 2_000;
/** How often the watchdog looks for executions past budget + grace (only while any run). */
const WATCH_EVERY_MS = 500;

/** The thread's engine options: what config.engine holds (all of it is cloneable). */
export type EngineRunnerOptions = Pick<
  EngineOptions,
  | 'allowPrivateNetwork'
  | 'executionTimeoutMs'
  | 'foreachMaxItems'
  | 'codeMemoryMb'
  | 'codeTimeoutMs'
  | 'recordMaxBytes'
  | 'httpMaxSocketsPerHost'
>;

export type ToThread =
  | {
      id: number;
      workflow: Workflow;
      /** The trigger item's JSON, as stored. */
      trigger: string;
      ctx: {
        executionId: string;
        mode: RunContext['mode'];
        attempt: number;
        respond: boolean;
        /** A waiting execution's checkpoint as stored (RunContext.resume's JSON): the thread parses it. */
        resumeJson?: string;
        /** The credentials the version's http steps name, unsealed for this run (RunContext.credentials). */
        credentials?: RunContext['credentials'];
      };
    }
  | 'close';

export type FromThread =
  /** The thread has loaded the engine: budgets count from now (see `#ready`). */
  | 'ready'
  | { id: number; response: StepResponse; result?: undefined; crash?: undefined }
  | { id: number; result: RunResult; response?: undefined; crash?: undefined }
  | {
      id: number;
      crash: { message: string; stack: string | undefined };
      result?: undefined;
      response?: undefined;
    };

interface Pending {
  resolve: (result: RunResult) => void;
  reject: (err: Error) => void;
  onRespond: RunContext['onRespond'];
  /** Epoch ms past which the thread is stopped for this execution (Infinity until the thread is ready). */
  stopAt: number;
}

export class EngineRunner {
  readonly #options: EngineRunnerOptions;
  readonly #log: Logger;
  readonly #pending = new Map<number, Pending>();
  #thread: Thread | undefined;
  /**
   * Whether the thread has loaded the engine. Until then no execution's budget runs: loading its
   * modules (QuickJS among them) took over 3 s on a loaded 2-core machine, and the watchdog failed
   * the first executions after a start with `execution_timeout` before they began.
   */
  #ready = false;
  #watchdog: NodeJS.Timeout | undefined;
  #seq = 0;
  #closed: Promise<void> | undefined;

  constructor({ options, log }: { options: EngineRunnerOptions; log: Logger }) {
    this.#options = {
      allowPrivateNetwork: options.allowPrivateNetwork,
      executionTimeoutMs: options.executionTimeoutMs,
      // The step limits of SPEC 7b (forEach, code), when configured.
      ...(options.foreachMaxItems !== undefined ? { foreachMaxItems: options.foreachMaxItems } : {}),
      ...(options.codeMemoryMb !== undefined ? { codeMemoryMb: options.codeMemoryMb } : {}),
      ...(options.codeTimeoutMs !== undefined ? { codeTimeoutMs: options.codeTimeoutMs } : {}),
      // The record limit: the thread posts records and checkpoints within it (engine-runner-thread.ts).
      ...(options.recordMaxBytes !== undefined ? { recordMaxBytes: options.recordMaxBytes } : {}),
      ...(options.httpMaxSocketsPerHost !== undefined
        ? { httpMaxSocketsPerHost: options.httpMaxSocketsPerHost }
        : {}),
    };
    this.#log = log;
  }

  /**
   * Runs `workflow` on the item whose JSON is `trigger` (from the checkpoint whose JSON is
   * `resumeJson`, when it resumes a waiting execution); crashes (engine bugs) reject.
   */
  run(workflow: Workflow, trigger: string, ctx: RunContext & { resumeJson?: string }): Promise<RunResult> {
    if (this.#closed) return Promise.reject(new Error('the engine thread is closed'));
    const thread = this.#start();
    const id = ++this.#seq;
    return new Promise<RunResult>((resolve, reject) => {
      if (this.#pending.size === 0) {
        thread.ref();
        this.#watchdog = setInterval(() => this.#watch(), WATCH_EVERY_MS);
        this.#watchdog.unref();
      }
      this.#pending.set(id, {
        resolve,
        reject,
        onRespond: ctx.onRespond,
        stopAt: this.#ready ? this.#stopAt() : Number.POSITIVE_INFINITY,
      });
      const msg: ToThread = {
        id,
        workflow,
        trigger,
        ctx: {
          executionId: ctx.executionId,
          mode: ctx.mode,
          attempt: ctx.attempt ?? 1,
          respond: ctx.onRespond !== undefined,
          ...(ctx.resumeJson !== undefined ? { resumeJson: ctx.resumeJson } : {}),
          ...(ctx.credentials ? { credentials: ctx.credentials } : {}),
        },
      };
      thread.postMessage(msg);
    });
  }

  /**
   * The thread, started on first use (and again after it was stopped): a process whose executions
   * all run before their commit never pays for it. Started with the worker, its isolate and the
   * engine's modules (~35 MB) raised the bench's peak RSS from 163–169 MB to 188–204 MB; the price
   * of starting late is the first execution waiting ~0.2 s for it.
   */
  #start(): Thread {
    if (this.#thread) return this.#thread;
    const thread = new Thread(threadModule('queue/engine-runner-thread.js'), {
      workerData: this.#options,
      // As for the SQLite writer thread: what an execution allocates dies young, and V8's default
      // young generation (up to 3 × 16 MB) only held it longer. 20 000 three-step executions sent
      // at once: peak RSS of the process 170 MB by default, 140 MB with 8 MB, no slower. 4 MB
      // halves the thread's new space again (8 → 4 MB) and is no slower either: 20 000 switch +
      // code executions, 8 at a time, straight through the thread, alternated 7 times on a shared
      // machine: 4 700 executions/s on average with 8 MB, 4 900 with 4 (2 500–6 500 single runs).
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    });
    thread.unref();
    this.#ready = false;
    thread.on('message', (reply: FromThread) => {
      if (reply !== 'ready') this.#reply(reply);
      else if (this.#thread === thread) {
        this.#ready = true;
        for (const p of this.#pending.values())
          if (p.stopAt === Number.POSITIVE_INFINITY) p.stopAt = this.#stopAt();
      }
    });
    thread.on('error', (err) => this.#lost(thread, err));
    thread.on('exit', (code) => this.#lost(thread, new Error(`the engine thread exited (code ${code})`)));
    this.#thread = thread;
    return thread;
  }

  #stopAt(): number {
    return Date.now() + this.#options.executionTimeoutMs + GRACE_MS;
  }

  #reply(reply: Exclude<FromThread, 'ready'>): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    if (reply.response) {
      pending.onRespond?.(reply.response);
      return;
    }
    this.#settled(reply.id);
    if (reply.crash) {
      const err = new Error(reply.crash.message);
      if (reply.crash.stack) err.stack = reply.crash.stack;
      pending.reject(err);
    } else pending.resolve(reply.result!);
  }

  #settled(id: number): void {
    this.#pending.delete(id);
    if (this.#pending.size === 0) {
      this.#thread?.unref();
      clearInterval(this.#watchdog);
    }
  }

  /** Stops the thread when an execution is past its budget and the grace the engine had to stop it. */
  #watch(): void {
    const now = Date.now();
    const overran = [...this.#pending.entries()].filter(([, p]) => now > p.stopAt);
    if (overran.length === 0 || !this.#thread) return;
    const thread = this.#thread;
    this.#thread = undefined;
    this.#log.error(
      { executions: overran.length, running: this.#pending.size },
      'an execution ignored its time budget; restarting the engine thread',
    );
    const ms = this.#options.executionTimeoutMs;
    for (const [id, p] of overran) {
      this.#settled(id);
      p.resolve({
        status: 'failed',
        steps: [],
        error: {
          message: `The execution ran longer than its budget of ${ms} ms (HOOKFLOW_EXECUTION_TIMEOUT_MS) and was stopped.`,
          code: 'execution_timeout',
        },
        output: null,
      });
    }
    this.#failAll(
      'The execution was interrupted: another execution on the same engine thread ignored its time budget and the thread was restarted.',
    );
    void thread.terminate();
  }

  /** The thread stopped (or was stopped): what ran there fails; the next run starts a new one. */
  #lost(thread: Thread, err: Error): void {
    if (this.#thread !== thread) return;
    this.#thread = undefined;
    if (this.#pending.size > 0 && !this.#closed) this.#log.error({ err }, 'the engine thread stopped');
    this.#failAll(`The execution was interrupted: the engine thread stopped (${err.message}).`);
  }

  #failAll(message: string): void {
    const all = [...this.#pending.entries()];
    for (const [id, p] of all) {
      this.#settled(id);
      p.reject(new Error(message));
    }
  }

  /**
   * The thread closes its outbound connections and ends; executions still running (past the
   * executor's close deadline) are cut off: their leases lapse and they run again elsewhere.
   */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      const thread = this.#thread;
      clearInterval(this.#watchdog);
      if (!thread) return;
      const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
      if (this.#pending.size > 0) await thread.terminate();
      else {
        thread.ref();
        thread.postMessage('close' satisfies ToThread);
        const stuck = setTimeout(() => void thread.terminate(), 5_000);
        await exited;
        clearTimeout(stuck);
      }
      this.#thread = undefined;
    })();
    return this.#closed;
  }
}
