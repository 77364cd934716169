/**
 * The code threads of one thread (the executor's engine thread; the event loop too, in tests that
 * run the engine in-process): where QuickJS runs, so that a run that overstays can be cut off
 * whatever it is doing. A run's limit is armed here as a timer when it is posted; the interrupt
 * handler inside QuickJS stops most runs at the limit and keeps the thread, and a run still going
 * KILL_AFTER_MS past it (stuck in one native call: JSON.parse of a body whose keys collide in
 * QuickJS's atom hash, `includes` on a long string) is cut off by terminating its thread, which
 * costs the next run nothing: a fresh thread is started at once.
 *
 * At most MAX_THREADS: the first is started on first use and kept warm; a second only when runs
 * wait behind one that has run for SPARE_AFTER_MS (a heavy run or a runaway holds the first), and
 * it is ended after SPARE_IDLE_MS without work. Runs that find every thread busy wait in order; the
 * longest wait is the limit of the run ahead (plus KILL_AFTER_MS), never the length of a native
 * call.
 *
 * Cost: the round trip to a warm thread. `return $input.a + 1` takes ~0.04 ms of QuickJS on the
 * thread itself, ~0.07 ms through it. Most of the difference is waking a sleeping thread, ~20–30 µs
 * of CPU each way on this 2-core VM (the engine thread posting its result to the event loop pays
 * the same). The bench's routed workflow (switch + code) straight through the engine thread, 8 at
 * a time, alternated rounds: ~175 µs of CPU per execution before, ~210 µs with the code thread.
 * Posting two runs at a time to a thread, so that it finds the next waiting, saved ~2 % of that,
 * within the noise: one at a time.
 */
import { Worker } from 'node:worker_threads';
import { threadModule } from '../../thread-module.js';
import { type CodeJob, type CodeReply, memoryMessage, timeoutMessage } from './quickjs.js';

/** Past a run's limit, how long the interrupt handler has to stop it before its thread is ended. */
export const KILL_AFTER_MS = 50;
/** Code threads at most (each ~10 MB, plus its QuickJS heap: up to the memory limit + 32 MiB). */
const MAX_THREADS = 2;
/**
 * Runs waiting behind one that has run this long go to a second thread (started if need be). Not
 * less: on a loaded machine a thread with a short run is sometimes descheduled for tens of ms.
 */
const SPARE_AFTER_MS = 50;
/** A thread beyond the first is ended after this long without a run. */
const SPARE_IDLE_MS = 10_000;

/**
 * A code thread's resource limits. Its V8 heap holds only a run's inputs as JSON text and its
 * logs (QuickJS's heap is WebAssembly memory, outside it): no bound of its own, since those
 * strings were made within the engine thread's (HOOKFLOW_ENGINE_MEMORY_MB), and a single string
 * past a worker's bound by more than the 16 MB Node grants its last garbage collection aborts the
 * process, not the thread. The stack is large because QuickJS's stack limit counts its own shadow
 * stack, which deep nesting uses ~25 times less of than the thread's stack (see quickjs.ts): with
 * 64 MB, 512 KiB of QuickJS stack is reached first (with Node's 4 MB, compiling 20 000 nested
 * `[` overflowed the thread's stack instead).
 */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 4, stackSizeMb: 64 };

interface Queued {
  job: CodeJob;
  resolve: (reply: CodeReply) => void;
}

/**
 * A code thread's modes: `starting` (loading QuickJS, or making its sandbox again after a run that
 * dropped it) ⇄ `idle` ⇄ `running` → `stopped`.
 */
type Mode = 'starting' | 'idle' | 'running' | 'stopped';

class CodeThread {
  mode: Mode = 'starting';
  /** The run in progress (`running`), when it was posted, and the timer armed past its limit. */
  run: (Queued & { postedAt: number; timer: NodeJS.Timeout }) | undefined;
  /** Ends a spare thread left idle (see SPARE_IDLE_MS). */
  idleTimer: NodeJS.Timeout | undefined;
  /** Has been ready once (a thread `starting` since is making its sandbox again). */
  started = false;

  constructor(readonly worker: Worker) {}
}

export class CodeThreads {
  readonly #threads: CodeThread[] = [];
  readonly #queue: Queued[] = [];
  #seq = 0;
  /** Armed while runs wait for a busy thread to count as held: see `#wait`. */
  #spareTimer: NodeJS.Timeout | undefined;

  /** Runs `job` in a code thread; always answers (a run cut off answers the timeout error). */
  run(job: CodeJob): Promise<CodeReply> {
    job.id = ++this.#seq;
    return new Promise<CodeReply>((resolve) => {
      this.#queue.push({ job, resolve });
      this.#dispatch();
    });
  }

  /** Ends every thread; runs in progress or waiting answer as failed. */
  async close(): Promise<void> {
    clearTimeout(this.#spareTimer);
    this.#spareTimer = undefined;
    const threads = [...this.#threads];
    for (const thread of threads) this.#stop(thread, 'The code sandbox was closed.');
    for (const q of this.#queue.splice(0)) q.resolve(failed(q.job, 'The code sandbox was closed.'));
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const next = this.#queue[0]!;
      if (next.job.until !== undefined && Date.now() >= next.job.until) {
        this.#queue.shift();
        next.resolve({ id: next.job.id, ok: false, deadline: true, logs: [] });
        continue;
      }
      const thread = this.#pick();
      if (!thread) {
        if (this.#threads.length === 0) this.#start(next.job.memoryBytes);
        else this.#wait();
        return;
      }
      this.#queue.shift();
      this.#post(thread, next);
    }
  }

  /**
   * The thread for the next run: the first idle one, in the order they were started, but a later
   * one only while each before it is held (on one run for SPARE_AFTER_MS) or starting. Runs wait
   * for a thread busy with short ones: spread over two threads, 8 runs at a time of `return
   * $input.a + 1` took 0.18–0.27 ms each instead of 0.11–0.14 ms.
   */
  #pick(): CodeThread | undefined {
    const now = Date.now();
    for (const t of this.#threads) {
      if (t.mode === 'idle') return t;
      const held = t.mode === 'starting' || (t.mode === 'running' && now - t.run!.postedAt >= SPARE_AFTER_MS);
      if (!held) return undefined;
    }
    return undefined;
  }

  /**
   * Runs wait and no thread may take them now: when the first busy thread will count as held, look
   * again; if every thread is held, start another (up to MAX_THREADS).
   */
  #wait(): void {
    if (this.#spareTimer) return;
    const now = Date.now();
    for (const t of this.#threads) {
      if (t.mode === 'running' && now - t.run!.postedAt < SPARE_AFTER_MS) {
        this.#spareTimer = setTimeout(
          () => {
            this.#spareTimer = undefined;
            this.#dispatch();
          },
          t.run!.postedAt + SPARE_AFTER_MS - now,
        );
        this.#spareTimer.unref();
        return;
      }
    }
    if (this.#threads.length < MAX_THREADS && !this.#threads.some((t) => t.mode === 'starting'))
      this.#start(this.#queue[0]!.job.memoryBytes);
  }

  #post(thread: CodeThread, q: Queued): void {
    assertMode(thread, 'idle');
    clearTimeout(thread.idleTimer);
    const postedAt = Date.now();
    const { timeoutMs, until } = q.job;
    const limit = Math.min(timeoutMs, until === undefined ? timeoutMs : until - postedAt);
    const timer = setTimeout(() => this.#overstayed(thread), limit + KILL_AFTER_MS);
    thread.mode = 'running';
    thread.run = { ...q, postedAt, timer };
    thread.worker.ref();
    thread.worker.postMessage(q.job);
  }

  #start(memoryBytes: number): void {
    const worker = new Worker(threadModule('engine/sandbox/code-thread.js'), {
      workerData: { memoryBytes },
      resourceLimits: THREAD_LIMITS,
    });
    worker.unref();
    const thread = new CodeThread(worker);
    worker.on('message', (msg: 'ready' | CodeReply) => {
      if (msg === 'ready') this.#ready(thread);
      else this.#replied(thread, msg);
    });
    worker.on('error', (err: Error & { code?: string }) => this.#lost(thread, err));
    worker.on('exit', (code) => this.#lost(thread, new Error(`the code thread exited (code ${code})`)));
    this.#threads.push(thread);
  }

  #ready(thread: CodeThread): void {
    if (thread.mode !== 'starting') return;
    thread.mode = 'idle';
    thread.started = true;
    this.#dispatch();
    this.#rest(thread);
  }

  #replied(thread: CodeThread, reply: CodeReply): void {
    const run = thread.run;
    if (thread.mode !== 'running' || !run || run.job.id !== reply.id) return;
    clearTimeout(run.timer);
    thread.run = undefined;
    // Making its sandbox again: it says 'ready' when done (see CodeReply.rebuilding).
    thread.mode = reply.rebuilding ? 'starting' : 'idle';
    thread.worker.unref();
    run.resolve(reply);
    this.#dispatch();
    this.#rest(thread);
  }

  /** An idle spare thread is ended after SPARE_IDLE_MS; the last one stays warm. */
  #rest(thread: CodeThread): void {
    if (thread.mode !== 'idle' || this.#threads.length <= 1) return;
    clearTimeout(thread.idleTimer);
    thread.idleTimer = setTimeout(() => {
      if (thread.mode === 'idle' && this.#threads.length > 1) this.#stop(thread);
    }, SPARE_IDLE_MS);
    thread.idleTimer.unref();
  }

  /** The run overstayed its limit by KILL_AFTER_MS: its thread is ended, a fresh one started. */
  #overstayed(thread: CodeThread): void {
    const run = thread.run;
    if (thread.mode !== 'running' || !run) return;
    thread.run = undefined;
    this.#stop(thread);
    const { job } = run;
    const byDeadline = job.until !== undefined && job.until < run.postedAt + job.timeoutMs;
    run.resolve(
      byDeadline
        ? { id: job.id, ok: false, deadline: true, logs: [] }
        : { id: job.id, ok: false, error: { message: timeoutMessage(job.timeoutMs) }, logs: [] },
    );
    // Warm for what comes next: the start is not on the next run's time.
    if (this.#threads.length === 0) this.#start(job.memoryBytes);
    this.#dispatch();
  }

  /** The thread died by itself (its V8 heap ran out, a crash): its run fails, the next starts one. */
  #lost(thread: CodeThread, err: Error & { code?: string }): void {
    if (thread.mode === 'stopped') return;
    const wasStarting = !thread.started;
    const run = thread.run;
    thread.run = undefined;
    this.#stop(thread);
    if (run) {
      clearTimeout(run.timer);
      run.resolve(
        failed(
          run.job,
          err.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? memoryMessage(run.job.memoryBytes)
            : `The code sandbox stopped: ${err.message}`,
        ),
      );
    }
    // A thread that could not even start would fail the same way again: what waits fails now.
    if (wasStarting)
      for (const q of this.#queue.splice(0))
        q.resolve(failed(q.job, `The code sandbox could not start: ${err.message}`));
    this.#dispatch();
  }

  #stop(thread: CodeThread, message?: string): void {
    if (thread.mode === 'stopped') return;
    clearTimeout(thread.idleTimer);
    const run = thread.run;
    thread.run = undefined;
    thread.mode = 'stopped';
    const i = this.#threads.indexOf(thread);
    if (i >= 0) this.#threads.splice(i, 1);
    if (run) {
      clearTimeout(run.timer);
      run.resolve(failed(run.job, message ?? 'The code sandbox stopped.'));
    }
    void thread.worker.terminate();
  }
}

function failed(job: CodeJob, message: string): CodeReply {
  return { id: job.id, ok: false, error: { message }, logs: [] };
}

function assertMode(thread: CodeThread, mode: Mode): void {
  if (thread.mode !== mode) throw new Error(`code thread: expected ${mode}, was ${thread.mode}`);
}

let threads: CodeThreads | undefined;

/** This thread's code threads (made on first use). */
export function codeThreads(): CodeThreads {
  threads ??= new CodeThreads();
  return threads;
}
