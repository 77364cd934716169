/**
 * Hot writes on SQLite, off the event loop: a worker thread with its own connection to the same
 * file runs each batch of them (store.writeHot, fed by group-commit.ts) in one transaction and
 * fsyncs it, while the event loop goes on reading and parsing requests. On the event loop these
 * writes took ~20 % of the process's time under load: the inserts themselves, the COMMIT writing
 * the WAL frames, and the fdatasync bookkeeping.
 *
 * SQLite still has one writer at a time: the thread takes the write lock (BEGIN IMMEDIATE) for a
 * batch, and the event loop's connection, which keeps every other write (API, claims, the callback
 * writes of group-commit.ts), waits for it with busy_timeout like any second connection. Group
 * commit never runs its two kinds of transaction at once, so the hot path itself never waits.
 *
 * If the thread dies, writes go back to the event loop's connection (`fallback`): slower, never lost.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { threadModule } from '../../thread-module.js';
import { completeParams, fieldParams, insertParams, partParams, type SqlValue } from './statements.js';
import type { HotWrite } from '../store.js';

export interface ThreadData {
  file: string;
  synchronous: string;
}

/** An insert's third element: its searchable fields' parameters (`fieldParams`). */
export type FieldParams = SqlValue[][];

/**
 * A write as the thread's batch runs it. A completion's third element: the checkpoint part it
 * appends (`partParams`), or, `'drop'`, that its checkpoint's parts are deleted.
 */
export type ThreadWrite =
  | ['insert', SqlValue[], FieldParams?]
  | ['complete', SqlValue[], (SqlValue[] | 'drop')?];

export interface ThreadRequest {
  seq: number;
  writes: ThreadWrite[];
}

/** The thread's answer to one batch: each write's result, or the error that rolled the batch back. */
export type ThreadReply =
  | { seq: number; results: boolean[]; error?: undefined }
  | { seq: number; error: { message: string; code: string | undefined } };

/** A hot write as the thread's batch (hot-batch.ts) takes it. */
export function threadWrite(w: HotWrite): ThreadWrite {
  if (w.kind === 'complete') {
    const c = w.completion;
    const part = partParams(c) ?? (c.dropCheckpoint ? 'drop' : undefined);
    return part ? ['complete', completeParams(c), part] : ['complete', completeParams(c)];
  }
  const fields = w.fields?.length ? w.fields.map(fieldParams) : undefined;
  return fields ? ['insert', insertParams(w.row), fields] : ['insert', insertParams(w.row)];
}

interface Pending {
  seq: number;
  resolve: (results: boolean[]) => void;
  reject: (err: Error) => void;
}

export class SqliteWriter {
  readonly #worker: Worker;
  /**
   * Batches sent, oldest first: the thread answers them in order. (A Map keyed by seq grew and
   * shrank with every batch, a runtime call each time: 0.1 µs a request in the webhook profile.)
   */
  #pending: Pending[] = [];
  readonly #fallback: (writes: readonly HotWrite[]) => Promise<boolean[]>;
  #seq = 0;
  #dead: Error | undefined;
  #closed: Promise<void> | undefined;

  readonly #log: Logger | undefined;

  constructor({
    file,
    synchronous,
    fallback,
    log,
  }: {
    file: string;
    synchronous: string;
    /** Runs writes on the event loop's connection when the thread is gone. */
    fallback: (writes: readonly HotWrite[]) => Promise<boolean[]>;
    log?: Logger | undefined;
  }) {
    this.#fallback = fallback;
    this.#log = log;
    const data: ThreadData = { file, synchronous };
    this.#worker = new Worker(threadModule('store/sqlite/writer-thread.js'), {
      workerData: data,
      // What the thread allocates per batch dies young; V8's default young generation (up to
      // 3 × 16 MB) only held it longer: peak RSS under the workflow load 217 → 190 MB with 8 MB,
      // 188 MB with 2 MB, throughput the same within noise.
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    });
    // Only writes in flight keep the process alive (ref'd in write, unref'd in #settle).
    this.#worker.unref();
    this.#worker.on('message', (reply: ThreadReply) => this.#settle(reply));
    this.#worker.on('error', (err) => this.#die(err));
    this.#worker.on('exit', (code) => this.#die(new Error(`the SQLite writer thread exited (code ${code})`)));
  }

  /** No batch is in flight on the thread. */
  get idle(): boolean {
    return this.#pending.length === 0;
  }

  write(writes: readonly HotWrite[]): Promise<boolean[]> {
    if (this.#dead || this.#closed) return this.#fallback(writes);
    const seq = ++this.#seq;
    const request: ThreadRequest = { seq, writes: writes.map(threadWrite) };
    return new Promise<boolean[]>((resolve, reject) => {
      if (this.#pending.length === 0) this.#worker.ref();
      this.#pending.push({ seq, resolve, reject });
      this.#worker.postMessage(request);
    });
  }

  #settle(reply: ThreadReply): void {
    if (this.#pending[0]?.seq !== reply.seq) return;
    const pending = this.#pending.shift()!;
    if (this.#pending.length === 0) this.#worker.unref();
    if (reply.error) {
      const err = new Error(reply.error.message) as Error & { code?: string };
      if (reply.error.code !== undefined) err.code = reply.error.code;
      pending.reject(err);
      return;
    }
    pending.resolve(reply.results);
  }

  /**
   * Writes in flight when the thread died are unknown: they fail, and group commit retries them one
   * by one on the event loop's connection. (A batch the thread committed just before dying is then
   * refused as a duplicate: its requests get a 500 although each is stored, once.)
   */
  #die(err: Error): void {
    if (this.#closed || this.#dead) return;
    this.#dead = err;
    this.#log?.error({ err }, 'the SQLite writer thread stopped; writing on the main thread from now on');
    for (const p of this.#pending) p.reject(new Error('the SQLite writer thread stopped', { cause: err }));
    this.#pending = [];
  }

  /** After the writes in flight: the thread closes its connection and ends. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      if (this.#dead) return;
      this.#worker.ref();
      const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
      this.#worker.postMessage('close');
      await exited;
    })();
    return this.#closed;
  }
}
