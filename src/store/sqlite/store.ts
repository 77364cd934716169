import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { splitBlob } from '../blobs.js';
import type { Database } from '../schema.js';
import { HookflowSqliteDialect } from './dialect.js';
import {
  COMPLETE_EXECUTION,
  DELETE_CHECKPOINT_PARTS,
  INSERT_CHECKPOINT_PART,
  INSERT_EXECUTION,
  INSERT_EXECUTION_FIELD,
  completeParams,
  fieldParams,
  insertParams,
  partParams,
} from './statements.js';
import { hotBatch } from './hot-batch.js';
import { SqliteWriter, type ThreadWrite, threadWrite } from './writer.js';
import { runHotWrites } from '../hot-writes.js';
import type { DialectCapabilities, HotStatements, Store } from '../store.js';

const CAPS: DialectCapabilities = { name: 'sqlite', binaryType: 'blob', skipLocked: false, shared: false };

export const SQLITE_FILE = 'hookflow.sqlite';

export async function openSqlite(config: Config['store'], log?: Logger): Promise<Store> {
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(config.dataDir, SQLITE_FILE);
  const database = new SqliteDatabase(file);
  // WAL lets readers (API, UI) run beside the one writer. synchronous=FULL fsyncs the WAL on every
  // commit, so a 2xx survives even power loss; group commit (ingest.ts) amortises that fsync.
  database.pragma('journal_mode = WAL');
  database.pragma(`synchronous = ${config.sqliteSynchronous}`);
  database.pragma('busy_timeout = 5000');
  // better-sqlite3 builds SQLite with a 16 MB page cache per connection; the OS caches the file
  // too, and this connection mostly reads (API, claims) and deletes (retention) now that the hot
  // writes have their own (writer.ts). 4 MB keeps the process under its memory bound.
  database.pragma('cache_size = -4096');
  database.pragma('foreign_keys = ON');
  // Its rollback keeps a full disk's SQLITE_FULL visible (dialect.ts).
  const db = new Kysely<Database>({ dialect: new HookflowSqliteDialect(database) });
  const wal = config.sqliteSynchronous === 'FULL' ? new WalSync(`${file}-wal`, file) : undefined;
  const normal = database.prepare('pragma synchronous = NORMAL');
  const full = database.prepare('pragma synchronous = FULL');
  const hot = preparedHotStatements(database);
  /** Transactions committing at NORMAL right now (below): a write meanwhile would not be synced. */
  let relaxed = 0;
  // SQLite has one writer, so a named lock has nothing to add to the transaction itself.
  const transaction: Store['transaction'] = wal
    ? /**
       * FULL without blocking the event loop. better-sqlite3 is synchronous, so with FULL every
       * COMMIT waited for its fsync (0.3–0.8 ms here) on the event loop: 16 % of the process's
       * time at 6 000 req/s, while no request could be read. Instead the transaction commits with
       * NORMAL (written to the WAL, not yet synced) and resolves only after an fdatasync of the
       * WAL on libuv's thread pool: what a caller sees is still "committed and on disk", the
       * event loop meanwhile serves other requests, and concurrent transactions share one
       * fdatasync. The connection is held from the pragma to the pragma (the safety level may
       * not change inside a transaction), so statements outside these transactions keep FULL.
       */
      async (fn) => {
        const result = await db.connection().execute(async (conn) => {
          normal.run();
          relaxed++;
          try {
            return await conn.transaction().execute(fn);
          } finally {
            full.run();
            relaxed--;
          }
        });
        await wal.sync();
        return result;
      }
    : (fn) => db.transaction().execute(fn);
  let nowBatch: ((writes: ThreadWrite[]) => boolean[]) | undefined;
  const writer = new SqliteWriter({
    file,
    synchronous: config.sqliteSynchronous,
    fallback: (writes) => transaction((trx) => runHotWrites(hot, trx, writes)),
    log,
  });
  return {
    db,
    caps: CAPS,
    hot,
    transaction,
    writeHot: (writes) => writer.write(writes),
    writeHotNow(writes) {
      // Not while the thread commits a batch (it holds the write lock), a transaction is open on
      // this connection, or one of them commits at NORMAL: this commit must be synced at the
      // configured level before it returns, as the thread's are.
      if (!writer.idle || database.inTransaction || relaxed > 0) return undefined;
      nowBatch ??= hotBatch(database);
      return nowBatch(writes.map(threadWrite));
    },
    async ping() {
      database.prepare('select 1').get();
    },
    async close() {
      await writer.close();
      await db.destroy();
      wal?.close();
    },
  };
}

/**
 * fdatasync of the WAL file off the event loop, coalesced: a caller is answered by the first
 * fdatasync that *starts* after it asked (one already running may predate its commit), so any
 * number of callers waiting together share one more.
 */
class WalSync {
  readonly #walPath: string;
  readonly #dbPath: string;
  #fd: number | undefined;
  #dbFd: number | undefined;
  #running: Promise<void> | undefined;
  #next: Promise<void> | undefined;

  constructor(walPath: string, dbPath: string) {
    this.#walPath = walPath;
    this.#dbPath = dbPath;
  }

  sync(): Promise<void> {
    if (!this.#running) {
      this.#running = this.#fdatasync().finally(() => {
        this.#running = undefined;
      });
      return this.#running;
    }
    this.#next ??= this.#running.then(
      () => this.#startNext(),
      () => this.#startNext(),
    );
    return this.#next;
  }

  #startNext(): Promise<void> {
    this.#next = undefined;
    return this.sync();
  }

  async #fdatasync(): Promise<void> {
    const fd = this.#open();
    await new Promise<void>((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
  }

  /**
   * The WAL's descriptor, opened once: SQLite deletes the WAL only when the last connection to the
   * database closes, and this store's connection is open as long as this object is used, so the
   * file is never replaced under it (checkpoints reset or truncate it in place). Until the first
   * commit has created the WAL, the database file itself is synced.
   */
  #open(): number {
    if (this.#fd !== undefined) return this.#fd;
    try {
      this.#fd = fs.openSync(this.#walPath, 'r');
      return this.#fd;
    } catch {
      this.#dbFd ??= fs.openSync(this.#dbPath, 'r');
      return this.#dbFd;
    }
  }

  close(): void {
    for (const fd of [this.#fd, this.#dbFd]) if (fd !== undefined) fs.closeSync(fd);
    this.#fd = undefined;
    this.#dbFd = undefined;
  }
}

/**
 * The hot statements as prepared statements on the raw connection, prepared once. Kysely's SQLite
 * driver builds, compiles and `prepare`s every query anew; on the ingest path that was ~40 µs of
 * the ~60 µs one execution insert took. They run synchronously inside the caller's transaction:
 * the `trx` argument proves there is one (Kysely's single SQLite connection is held by it, so no
 * other query can interleave).
 */
function preparedHotStatements(database: SqliteDatabase.Database): HotStatements {
  // Prepared on first use: the tables exist only once the migrations have run.
  let insert: SqliteDatabase.Statement | undefined;
  let field: SqliteDatabase.Statement | undefined;
  let complete: SqliteDatabase.Statement | undefined;
  let blob: SqliteDatabase.Statement | undefined;
  let part: SqliteDatabase.Statement | undefined;
  let checkpointPart: SqliteDatabase.Statement | undefined;
  let dropParts: SqliteDatabase.Statement | undefined;
  return {
    async insertExecution(_trx, r, fields) {
      insert ??= database.prepare(INSERT_EXECUTION);
      insert.run(insertParams(r));
      if (!fields?.length) return;
      field ??= database.prepare(INSERT_EXECUTION_FIELD);
      for (const f of fields) field.run(fieldParams(f));
    },
    async insertBlobs(_trx, rows) {
      blob ??= database.prepare(
        `insert into blobs (id, execution_id, sha256, size, mime_type, filename, data, created_at)
         values (?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      part ??= database.prepare('insert into blob_parts (blob_id, seq, data) values (?, ?, ?)');
      for (const blobRow of rows) {
        const { row: r, parts } = splitBlob(blobRow);
        blob.run(
          r.id,
          r.execution_id ?? null,
          r.sha256,
          r.size,
          r.mime_type,
          r.filename,
          r.data,
          r.created_at,
        );
        for (const p of parts) part.run(p.blob_id, p.seq, p.data);
      }
    },
    async completeExecutions(_trx, completions) {
      complete ??= database.prepare(COMPLETE_EXECUTION);
      const statement = complete;
      return completions.map((c) => {
        const done = statement.run(completeParams(c)).changes > 0;
        const p = done ? partParams(c) : undefined;
        if (p) {
          checkpointPart ??= database.prepare(INSERT_CHECKPOINT_PART);
          checkpointPart.run(p);
        } else if (done && c.dropCheckpoint) {
          dropParts ??= database.prepare(DELETE_CHECKPOINT_PARTS);
          dropParts.run(c.id);
        }
        return done;
      });
    },
  };
}
