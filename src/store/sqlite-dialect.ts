/**
 * Kysely's SQLite dialect, with one change: a failed transaction is rolled back only when SQLite
 * has not already rolled it back itself. On some errors (SQLITE_FULL, SQLITE_IOERR, a COMMIT that
 * could not be written) SQLite ends the transaction on its own; Kysely then sent ROLLBACK anyway,
 * and *that* error ("cannot rollback - no transaction is active", SQLITE_ERROR) replaced the real
 * one, so a full disk looked like a bug (500) instead of the store refusing writes (503, see
 * unavailable.ts). Rails and rocicorp's zero fixed theirs the same way: check `inTransaction` first.
 */
import type SqliteDatabase from 'better-sqlite3';
import { type DatabaseConnection, type Driver, SqliteDialect, SqliteDriver } from 'kysely';

class RollbackOnlyInTransactionDriver extends SqliteDriver {
  readonly #database: SqliteDatabase.Database;

  constructor(database: SqliteDatabase.Database) {
    super({ database });
    this.#database = database;
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
