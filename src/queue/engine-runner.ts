/**
 * The executor runs executions here, on a worker thread, not on the event loop. JSONata
 * evaluation is synchronous CPU work (its async evaluate only awaits microtasks; the hook in
 * engine/expressions.ts yields a turn every 10 ms, but parsing the item, copying and serialising
 * results cannot yield, nor can one built-in call): on the event loop a heavy execution delayed
 * every other request: a 3 MB item with four `$count(items[price > N])` fields and an
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
 * JSONata evaluates, and by aborting `http` steps); `code` steps run in code threads of the engine
 * thread, cut off at their own limit (engine/sandbox/threads.ts). What it cannot interrupt (one
 * built-in call that is slow by itself: a regular expression that backtracks catastrophically) is
 * stopped here: an execution not answered GRACE_MS past its budget has the thread terminated and
 * started again. It is failed with `execution_timeout` (as is any other execution past its own
 * budget and grace by then: which of them held the thread cannot be told from here, and each has
 * spent its budget).
 *
 * Memory. The thread's V8 heap is bounded (HOOKFLOW_ENGINE_MEMORY_MB, `maxOldGenerationSizeMb`;
 * V8's default here was 4 GB): past it Node ends the thread (ERR_WORKER_OUT_OF_MEMORY), not the
 * process. Measured with a 64 MB bound: 100 KB strings, small objects or JSON.stringify results
 * piling up end the thread after ~2–3 s of garbage collection near the bound. What Node cannot
 * save: one allocation that overshoots the bound by more than the 16 MB it grants a dying worker's
 * last collection (an 80 MB array at 64 MB) aborts the process, as it would at V8's default.
 *
 * Bystanders. The other executions running on a thread that is terminated, or that dies, did
 * nothing wrong: they are not failed but run again (EngineThreadLost: the executor queues them
 * again as their next attempt, at-least-once, as after a crash). Which execution exhausted the
 * memory is not known, so after an out-of-memory death each of them runs again once; one that is
 * on the thread for a second such death in this process is failed, once, saying so. Any execution
 * thrown off a thread more than MAX_RERUNS times in this process is failed too, so that nothing
 * loops (and the queue gives up after MAX_ATTEMPTS attempts across processes).
 */
import { Worker as Thread } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { TokenResult, TokenSource } from '../engine/credentials.js';
import type { EngineOptions, RunContext, RunResult } from '../engine/run.js';
import { threadModule } from '../thread-module.js';
import type { Workflow } from '../model/workflow.js';
import type { StepResponse } from '../bus/bus.js';
import type { FileCall, FileReply, StoredFiles } from './engine-files.js';
import type { EngineServices } from '../engine/services.js';

/** Past an execution's budget, how long the engine gets to stop it before the thread is. */
const GRACE_MS = 2_000;
/** HOOKFLOW_ENGINE_MEMORY_MB's default: the engine thread's V8 heap (old generation), in MB. */
export const DEFAULT_ENGINE_MEMORY_MB = 512;
/** Workflow versions the thread keeps; past this many it is told to forget them all and is sent them again. */
const MAX_SENT_VERSIONS = 500;
/** Times an execution may be thrown off a lost thread in this process before it is failed. */
const MAX_RERUNS = 3;
/** Executions whose losses are counted (forgotten past this: one may run once more). */
const MAX_COUNTED = 10_000;
/** How often the watchdog looks for executions past budget + grace (only while any run). */
const WATCH_EVERY_MS = 500;

/**
 * An execution was running on an engine thread that was terminated or died because of something
 * else: it did not finish and should run again (worker.ts queues it as its next attempt).
 */
export class EngineThreadLost extends Error {
  override name = 'EngineThreadLost';
}

/** The thread's engine options: what config.engine holds (all of it is cloneable). */
export type EngineRunnerOptions = Omit<EngineThreadOptions, 'computeSlots'> & {
  /** HOOKFLOW_ENGINE_MEMORY_MB: the engine thread's heap bound (default DEFAULT_ENGINE_MEMORY_MB). */
  memoryMb?: number;
};

type EngineThreadOptions = Pick<
  EngineOptions,
  | 'allowPrivateNetwork'
  | 'executionTimeoutMs'
  | 'foreachMaxItems'
  | 'codeMemoryMb'
  | 'codeTimeoutMs'
  | 'recordMaxBytes'
  | 'httpMaxSocketsPerHost'
  | 'sqlPrivateNetworks'
  | 'resumeUrls'
> & {
  /** HOOKFLOW_EXECUTOR_CONCURRENCY: executions that compute on the thread at once (compute-slots.ts). */
  computeSlots: number;
};

export type ToThread =
  | {
      id: number;
      /** `${id}@${version}`: the thread keeps the versions it was sent (`workflow` only the first time). */
      version: string;
      workflow?: Workflow;
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
        /** Variables and secrets, unsealed for this run (RunContext.variables). */
        variables?: RunContext['variables'];
      };
    }
  /** Runs posted in one turn of the event loop, as one message (see `#post`). */
  | { runs: RunMessage[] }
  /** The thread forgets the versions it was sent (this side stopped counting them: MAX_SENT_VERSIONS). */
  | { forgetVersions: true }
  /** A credential changed or was deleted: the thread's `sql` pool for it closes. */
  | { forgetCredential: string }
  /** The answer to the thread's file call `file` (engine-files.ts). */
  | { file: number; reply: FileReply }
  /** The answer to the thread's `token` request of the same `rid`. */
  | { tokenReply: { rid: number; result: TokenResult } }
  /** The answer to a service call of the thread (`FromThread` `call`): its value, or why it failed. */
  | {
      answer: number;
      value?: unknown;
      error?: { message: string; refusal?: { code?: string; field?: string } };
    }
  | 'close';

/** One run as the thread gets it. */
export type RunMessage = Extract<ToThread, { id: number }>;

/** What the thread answers about one run. */
export type RunReply = Extract<FromThread, { id: number }>;

export type FromThread =
  /** Replies about runs posted in one turn of the thread's event loop, as one message. */
  | { replies: RunReply[]; id?: undefined }
  /** A step calls a service (EngineServices) of the event loop; answered by `answer` with the same number. */
  | { service: number; name: keyof EngineServices; arg: unknown; id?: undefined }
  /** The thread has loaded the engine: budgets count from now (see `#ready`). */
  | 'ready'
  /** A call of the thread's FileStore, answered from the store (engine-files.ts). */
  | { file: number; call: FileCall }
  /** An `http` step asks for an OAuth2 access token (RunContext.tokens); answered with `tokenReply`. */
  | { token: { rid: number; credentialId: string; rejected?: string } }
  /**
   * The execution waits for a compute slot on the thread (`queued`: its budget does not run), or
   * got one after waiting (`started`: it runs from now); it gave its slot up to wait on the outside
   * world (`outside`: an outbound call, a timer), or is back from that wait (`back`). See
   * compute-slots.ts; the worker counts the runs that compute from these (slots.ts).
   */
  | {
      id: number;
      slot: 'queued' | 'started' | 'outside' | 'back';
      response?: undefined;
      result?: undefined;
      crash?: undefined;
    }
  | { id: number; response: StepResponse; slot?: undefined; result?: undefined; crash?: undefined }
  | { id: number; result: RunResult; slot?: undefined; response?: undefined; crash?: undefined }
  | {
      id: number;
      crash: { message: string; stack: string | undefined };
      slot?: undefined;
      result?: undefined;
      response?: undefined;
    };

interface Pending {
  executionId: string;
  resolve: (result: RunResult) => void;
  reject: (err: Error) => void;
  onRespond: RunContext['onRespond'];
  /** Epoch ms past which the thread is stopped for this execution (Infinity until the thread is ready). */
  stopAt: number;
  /** Waiting on the outside world (its compute slot given up). */
  outside: boolean;
}

export class EngineRunner {
  readonly #options: EngineThreadOptions;
  readonly #memoryMb: number;
  readonly #log: Logger;
  readonly #files: StoredFiles | undefined;
  /** Answers the thread's requests for OAuth2 access tokens (credentials/oauth2.ts). */
  readonly #tokens: TokenSource | undefined;
  readonly #services: EngineServices | undefined;
  /** Per execution, how often it was on a lost thread in this process (see the header). */
  readonly #losses = new Map<string, { lost: number; outOfMemory: number }>();
  readonly #pending = new Map<number, Pending>();
  /** Runs of `#pending` waiting on the outside world: the others compute, or wait for a slot to. */
  #outside = 0;
  /** Told when a run starts or stops waiting on the outside world (the worker's `Holding.outside`). */
  readonly #onOutside: ((outside: number) => void) | undefined;
  #thread: Thread | undefined;
  /**
   * Whether the thread has loaded the engine. Until then no execution's budget runs: loading its
   * modules (QuickJS among them) took over 3 s on a loaded 2-core machine, and the watchdog failed
   * the first executions after a start with `execution_timeout` before they began.
   */
  #ready = false;
  #watchdog: NodeJS.Timeout | undefined;
  #seq = 0;
  /** Workflow versions the thread was sent (it keeps them: a run names its version by key). */
  readonly #sent = new Set<string>();
  /** Runs to post at the end of this turn (`#post`). */
  #outbox: RunMessage[] = [];
  #closed: Promise<void> | undefined;

  /**
   * `services`: the data store and other workflows (engine/services.ts) for `store` and
   * `workflow` steps. The thread asks for them by message and they run here, on the event loop,
   * over the process's one store (as `files` do): the thread opens no database of its own (a
   * second SQLite connection would be a second writer contending with the writer thread for the
   * file's lock; on PostgreSQL a second pool per process), and starting a child execution is the
   * executor's business anyway. A call costs one message each way (a value of up to 256 KiB copied).
   */
  constructor({
    options,
    computeSlots,
    log,
    files,
    tokens,
    services,
    onOutside,
  }: {
    options: EngineRunnerOptions;
    /** HOOKFLOW_EXECUTOR_CONCURRENCY. */
    computeSlots: number;
    log: Logger;
    files?: StoredFiles;
    tokens?: TokenSource | undefined;
    services?: EngineServices | undefined;
    onOutside?: (outside: number) => void;
  }) {
    this.#onOutside = onOutside;
    this.#files = files;
    this.#tokens = tokens;
    this.#services = services;
    this.#options = {
      computeSlots,
      allowPrivateNetwork: options.allowPrivateNetwork,
      executionTimeoutMs: options.executionTimeoutMs,
      // The step limits of SPEC 7b (forEach, code), when configured.
      ...(options.foreachMaxItems !== undefined ? { foreachMaxItems: options.foreachMaxItems } : {}),
      ...(options.codeMemoryMb !== undefined ? { codeMemoryMb: options.codeMemoryMb } : {}),
      ...(options.codeTimeoutMs !== undefined ? { codeTimeoutMs: options.codeTimeoutMs } : {}),
      // The record limit: the thread posts records and checkpoints within it (engine-runner-thread.ts).
      ...(options.recordMaxBytes !== undefined ? { recordMaxBytes: options.recordMaxBytes } : {}),
      ...(options.resumeUrls ? { resumeUrls: options.resumeUrls } : {}),
      ...(options.httpMaxSocketsPerHost !== undefined
        ? { httpMaxSocketsPerHost: options.httpMaxSocketsPerHost }
        : {}),
      ...(options.sqlPrivateNetworks !== undefined
        ? { sqlPrivateNetworks: [...options.sqlPrivateNetworks] }
        : {}),
    };
    this.#memoryMb = options.memoryMb ?? DEFAULT_ENGINE_MEMORY_MB;
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
        executionId: ctx.executionId,
        resolve,
        reject,
        onRespond: ctx.onRespond,
        stopAt: this.#ready ? this.#stopAt() : Number.POSITIVE_INFINITY,
        outside: false,
      });
      const version = `${workflow.id}@${workflow.version}`;
      const known = this.#sent.has(version);
      if (!known) {
        if (this.#sent.size >= MAX_SENT_VERSIONS) {
          this.#sent.clear();
          this.#flush();
          thread.postMessage({ forgetVersions: true } satisfies ToThread);
        }
        this.#sent.add(version);
      }
      const msg: RunMessage = {
        id,
        version,
        ...(known ? {} : { workflow }),
        trigger,
        ctx: {
          executionId: ctx.executionId,
          mode: ctx.mode,
          attempt: ctx.attempt ?? 1,
          respond: ctx.onRespond !== undefined,
          ...(ctx.resumeJson !== undefined ? { resumeJson: ctx.resumeJson } : {}),
          ...(ctx.credentials ? { credentials: ctx.credentials } : {}),
          ...(ctx.variables ? { variables: ctx.variables } : {}),
        },
      };
      this.#post(msg);
    });
  }

  /**
   * Runs started in one turn of the event loop go to the thread as one message at its end (a
   * claim starts dozens at once): each message costs a structured clone's framing, a wake-up of
   * the thread and an event dispatched there. The thread answers the same way (`replies`).
   */
  #post(msg: RunMessage): void {
    if (this.#outbox.length === 0) setImmediate(() => this.#flush());
    this.#outbox.push(msg);
  }

  /**
   * Posts the runs waiting in the outbox to the thread. They are always the current thread's: a
   * new thread starts with an empty outbox (`#start`; the runs meant for a lost one were failed
   * by `#lost` and run again).
   */
  #flush(): void {
    if (this.#outbox.length === 0 || !this.#thread) return;
    const runs = this.#outbox;
    this.#outbox = [];
    this.#thread.postMessage({ runs } satisfies ToThread);
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
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: this.#memoryMb },
    });
    thread.unref();
    this.#ready = false;
    this.#sent.clear();
    this.#outbox = [];
    thread.on('message', (reply: FromThread) => {
      if (reply !== 'ready' && 'replies' in reply) for (const r of reply.replies) this.#reply(r);
      else if (reply !== 'ready' && 'call' in reply) void this.#file(thread, reply.file, reply.call);
      else if (reply !== 'ready' && 'token' in reply) this.#token(thread, reply.token);
      else if (reply !== 'ready' && 'service' in reply) this.#call(thread, reply);
      else if (reply !== 'ready') this.#reply(reply);
      else if (this.#thread === thread) {
        this.#ready = true;
        for (const p of this.#pending.values())
          if (p.stopAt === Number.POSITIVE_INFINITY) p.stopAt = this.#stopAt();
      }
    });
    thread.on('error', (err: Error & { code?: string }) => this.#lost(thread, err));
    thread.on('exit', (code) => this.#lost(thread, new Error(`the engine thread exited (code ${code})`)));
    this.#thread = thread;
    return thread;
  }

  /** Answers a file call of the thread (the reply's bytes moved, not copied, when they own their buffer). */
  async #file(thread: Thread, file: number, call: FileCall): Promise<void> {
    const reply: FileReply = this.#files
      ? await this.#files.handle(call)
      : { error: 'this executor has no file store' };
    const data = reply.ok && typeof reply.ok === 'object' ? reply.ok.data : undefined;
    const own = data && data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
    try {
      thread.postMessage({ file, reply } satisfies ToThread, own ? [data.buffer as ArrayBuffer] : []);
    } catch {
      // The thread is gone (terminated meanwhile): its executions run again elsewhere.
    }
  }

  /** Gets the access token the thread asks for and posts it back (errors become the step's). */
  #token(thread: Thread, ask: { rid: number; credentialId: string; rejected?: string }): void {
    const answer = (result: TokenResult) => {
      if (this.#thread === thread)
        thread.postMessage({ tokenReply: { rid: ask.rid, result } } satisfies ToThread);
    };
    if (!this.#tokens) {
      answer({ error: 'This executor cannot get OAuth2 access tokens.' });
      return;
    }
    this.#tokens.accessToken(ask.credentialId, ask.rejected).then(answer, (err: unknown) => {
      this.#log.error({ err, credentialId: ask.credentialId }, 'getting an OAuth2 access token failed');
      answer({ error: `Getting an access token for credential ${ask.credentialId} failed: ${String(err)}` });
    });
  }

  /** A service call of the thread: run it here and post the answer back (to that thread only). */
  #call(thread: Thread, { service: call, name, arg }: Extract<FromThread, { service: number }>): void {
    const services = this.#services;
    const answer = (msg: ToThread) => {
      if (this.#thread === thread) thread.postMessage(msg);
    };
    if (!services) {
      answer({
        answer: call,
        error: { message: 'This process offers steps no data store or sub-workflows.' },
      });
      return;
    }
    // biome-ignore lint/suspicious/noExplicitAny: the thread names the method and its argument.
    (services[name] as (a: any) => Promise<unknown>)(arg).then(
      (value) => answer({ answer: call, value }),
      (err: unknown) => {
        const e = err as { message?: unknown; name?: unknown; code?: string; field?: string };
        const refusal = e?.name === 'ServiceRefusal';
        if (!refusal) this.#log.error({ err, service: name }, 'a step’s service call failed');
        answer({
          answer: call,
          error: {
            message: typeof e?.message === 'string' ? e.message : String(err),
            ...(refusal
              ? { refusal: { ...(e.code ? { code: e.code } : {}), ...(e.field ? { field: e.field } : {}) } }
              : {}),
          },
        });
      },
    );
  }

  #stopAt(): number {
    return Date.now() + this.#options.executionTimeoutMs + GRACE_MS;
  }

  #reply(reply: RunReply): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    if (reply.slot === 'outside' || reply.slot === 'back') {
      this.#waitsOutside(pending, reply.slot === 'outside');
      return;
    }
    if (reply.slot) {
      // Its budget runs only while it holds a slot or waits on the outside world: not while it
      // waits for a slot before its first step.
      pending.stopAt = reply.slot === 'queued' || !this.#ready ? Number.POSITIVE_INFINITY : this.#stopAt();
      return;
    }
    if (reply.response) {
      pending.onRespond?.(reply.response);
      return;
    }
    this.#settled(reply.id, pending);
    this.#losses.delete(pending.executionId);
    if (reply.crash) {
      const err = new Error(reply.crash.message);
      if (reply.crash.stack) err.stack = reply.crash.stack;
      pending.reject(err);
    } else pending.resolve(reply.result!);
  }

  #waitsOutside(pending: Pending, outside: boolean): void {
    if (pending.outside === outside) return;
    pending.outside = outside;
    this.#outside += outside ? 1 : -1;
    this.#onOutside?.(this.#outside);
  }

  #settled(id: number, pending: Pending): void {
    this.#waitsOutside(pending, false);
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
      this.#settled(id, p);
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
    this.#rerunAll(
      'another execution on the same engine thread ignored its time budget and the thread was restarted',
      false,
    );
    void thread.terminate();
  }

  /** The thread stopped (or was stopped): what ran there runs again; the next run starts a new one. */
  #lost(thread: Thread, err: Error & { code?: string }): void {
    if (this.#thread !== thread) return;
    this.#thread = undefined;
    const outOfMemory = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
    if (this.#pending.size > 0 && !this.#closed)
      this.#log.error({ err, executions: this.#pending.size }, 'the engine thread stopped');
    this.#rerunAll(
      outOfMemory
        ? `the engine thread ran out of memory (HOOKFLOW_ENGINE_MEMORY_MB: ${this.#memoryMb} MB)`
        : `the engine thread stopped (${err.message})`,
      outOfMemory,
    );
  }

  /**
   * Hands every execution still on the lost thread back to be run again (EngineThreadLost), but
   * fails one on the thread for its second out-of-memory death, or lost more than MAX_RERUNS times.
   */
  #rerunAll(reason: string, outOfMemory: boolean): void {
    if (this.#losses.size > MAX_COUNTED) this.#losses.clear();
    for (const [id, p] of [...this.#pending.entries()]) {
      this.#settled(id, p);
      const counts = this.#losses.get(p.executionId) ?? { lost: 0, outOfMemory: 0 };
      counts.lost++;
      if (outOfMemory) counts.outOfMemory++;
      this.#losses.set(p.executionId, counts);
      if (counts.outOfMemory >= 2) {
        this.#losses.delete(p.executionId);
        p.resolve(
          failed(
            `The execution used more memory than the engine allows (HOOKFLOW_ENGINE_MEMORY_MB: ${this.#memoryMb} MB): the engine thread ran out of memory twice while it ran, so it was stopped and is not run again.`,
          ),
        );
      } else if (counts.lost > MAX_RERUNS) {
        this.#losses.delete(p.executionId);
        p.resolve(
          failed(
            `The execution was interrupted ${counts.lost} times: the engine thread running it stopped each time (last: ${reason}).`,
          ),
        );
      } else p.reject(new EngineThreadLost(`The execution was interrupted and runs again: ${reason}.`));
    }
  }

  /**
   * A credential changed or was deleted: the engine thread closes its database connections for
   * it (steps/sql.ts), once the statements running on them are done. Nothing to do before the
   * thread has started.
   */
  forgetCredential(id: string): void {
    this.#thread?.postMessage({ forgetCredential: id } satisfies ToThread);
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

function failed(message: string): RunResult {
  return { status: 'failed', steps: [], error: { message }, output: null };
}
