/**
 * Kysely's SQLite dialect, with one change: a failed transaction is rolled back only when SQLite
 * has not already rolled it back itself. On some errors (SQLITE_FULL, SQLITE_IOERR, a COMMIT that
 * could not be written) SQLite ends the transaction on its own; Kysely then sent ROLLBACK anyway,
 * and *that* error ("cannot rollback - no transaction is active", SQLITE_ERROR) replaced the real
 * one, so a full disk looked like a bug (500) instead of the store refusing writes (503, see
 * unavailable.ts). Rails and rocicorp's zero fixed theirs the same way: check `inTransaction` first.
 *
 * And a transaction begins IMMEDIATE (takes the write lock at once, waiting for it up to
 * busy_timeout), not DEFERRED: this connection's transactions write, and the writer thread's
 * connection commits hot writes all the time (writer.ts). A deferred transaction that read
 * first and wrote after such a commit failed at once with SQLITE_BUSY_SNAPSHOT (WAL: its snapshot
 * is stale, and waiting cannot help), so an API call (activate, deactivate) answered 503
 * store_unavailable while executions were recorded. Rails made IMMEDIATE its default for the same
 * reason.
 */
import type SqliteDatabase from 'better-sqlite3';
import { CompiledQuery, type DatabaseConnection, type Driver, SqliteDialect, SqliteDriver } from 'kysely';

class RollbackOnlyInTransactionDriver extends SqliteDriver {
  readonly #database: SqliteDatabase.Database;

  constructor(database: SqliteDatabase.Database) {
    super({ database });
    this.#database = database;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.#database.inTransaction) await super.rollbackTransaction(connection);
  }
}

export class HookflowSqliteDialect extends SqliteDialect {
  readonly #database: SqliteDatabase.Database;

  constructor(database: SqliteDatabase.Database) {
    super({ database });
    this.#database = database;
  }

  override createDriver(): Driver {
    return new RollbackOnlyInTransactionDriver(this.#database);
  }
}
