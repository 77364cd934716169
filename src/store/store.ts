/**
 * The store: one Kysely instance over SQLite (embedded default) or PostgreSQL (distributed mode),
 * plus the few capability flags where the dialects differ. Services never branch on the dialect
 * name; they read a flag. Repositories (workflows.ts, executions.ts, …) take a `Db`, which is the
 * Kysely instance or a transaction of it. Types only: open.ts opens one (as Kysely's dialects keep
 * their interface apart from their factories), so the dialects can import these types without a
 * cycle back through the factory that loads them.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database, ExecutionFieldRow, ExecutionsTable, NewBlobRow, NewExecutionRow } from './schema.js';

export type Db = Kysely<Database> | Transaction<Database>;

export interface DialectCapabilities {
  name: 'sqlite' | 'postgres';
  /** Column type for bytes. */
  binaryType: 'blob' | 'bytea';
  /** Whether `FOR UPDATE SKIP LOCKED` exists (PostgreSQL); SQLite has one writer, so a plain UPDATE … RETURNING claims. */
  skipLocked: boolean;
  /** Whether several processes may share the store (then the bus must cross processes). */
  shared: boolean;
}

/** What `HotStatements.completeExecutions` writes for one execution. */
export interface ExecutionCompletion {
  id: string;
  /** Recorded only while this worker still holds the execution. */
  lockedBy: string;
  status: ExecutionsTable['status'];
  /** JSON text. */
  steps: string;
  /** JSON text, or null. */
  error: string | null;
  /** Null while waiting. */
  finishedAt: string | null;
  /** Waiting: when it resumes (the new `run_after`); null keeps `run_after`. */
  runAfter: string | null;
  /** Waiting: the checkpoint's head (JSON); null otherwise (a finished execution keeps none). */
  resumeState: string | null;
  /**
   * Waiting: the part of the checkpoint this park adds (engine/checkpoint.ts), appended to
   * `execution_checkpoints` in the same transaction, and only when the completion is recorded.
   */
  checkpointPart?: CheckpointPart | undefined;
  /** Finished, having resumed from a checkpoint: its parts are deleted in the same transaction. */
  dropCheckpoint?: boolean | undefined;
}

/** One part of a waiting execution's checkpoint (`execution_checkpoints`). */
export interface CheckpointPart {
  seq: number;
  /** JSON: values and outputs added by the park. */
  state: string;
  /** JSON: the records' delta. */
  records: string;
}

/**
 * The statements run once per webhook request and once per execution. Through Kysely each costs a
 * query build, a compile and (on better-sqlite3) a fresh `prepare`: ~40 µs of the ~60 µs an insert
 * took at 2 000 req/s. A dialect may run them as cached prepared statements instead (SQLite does);
 * `kyselyHotStatements` (hot-writes.ts) is the portable version. Each takes the transaction it
 * runs in, so a raw statement can never land in somebody else's transaction on the shared SQLite
 * connection.
 */
export interface HotStatements {
  /** With its searchable fields' rows (execution-search.ts), none for most workflows. */
  insertExecution(
    trx: Transaction<Database>,
    row: NewExecutionRow,
    fields?: readonly ExecutionFieldRow[],
  ): Promise<void>;
  /**
   * Uploaded files. Also kept off Kysely for memory: its query compiler holds the parameters of
   * the last query it compiled, so a 16 MiB upload stayed in memory until the next query.
   */
  insertBlobs(trx: Transaction<Database>, rows: readonly NewBlobRow[]): Promise<void>;
  /** Returns, per completion in order, whether it was recorded (false: lease lost). */
  completeExecutions(
    trx: Transaction<Database>,
    completions: readonly ExecutionCompletion[],
  ): Promise<boolean[]>;
}

/**
 * A hot write as data: what ingest (an accepted request's execution) and the executor (a result)
 * write on their own, with no other statement of theirs in the same transaction. As data rather
 * than a callback, a store may run a batch of them anywhere, even on another thread (SQLite does:
 * sqlite/writer.ts).
 */
export type HotWrite =
  | { kind: 'insert'; row: NewExecutionRow; fields?: readonly ExecutionFieldRow[] }
  | { kind: 'complete'; completion: ExecutionCompletion };

export interface Store {
  readonly db: Kysely<Database>;
  readonly caps: DialectCapabilities;
  readonly hot: HotStatements;
  /**
   * Run fn in one transaction. `lock` names a critical section (e.g. path ownership): PostgreSQL
   * takes a transaction-scoped advisory lock on it; SQLite needs none since it has one writer.
   */
  transaction<T>(fn: (trx: Transaction<Database>) => Promise<T>, options?: { lock?: string }): Promise<T>;
  /**
   * Commit hot writes in one transaction (durably, like `transaction`); per write what
   * `runHotWrites` (hot-writes.ts) says. On SQLite this runs on a thread of its own.
   */
  writeHot(writes: readonly HotWrite[]): Promise<boolean[]>;
  /**
   * `writeHot` at once, on the calling thread (the event loop), when the store can: the results,
   * durable when it returns; undefined when it cannot now (another write or transaction is under
   * way). Only SQLite has it (http/lone-sender.ts says when it is worth it). Throws what the commit throws.
   */
  writeHotNow?(writes: readonly HotWrite[]): boolean[] | undefined;
  /** Throws when the database cannot be reached (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
