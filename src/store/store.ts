/**
 * The store: one Kysely instance over SQLite (embedded default) or PostgreSQL (distributed mode),
 * plus the few capability flags where the dialects differ. Services never branch on the dialect
 * name; they read a flag. Repositories (workflows.ts, executions.ts, …) take a `Db`, which is the
 * Kysely instance or a transaction of it.
 */
import { Migrator, type Kysely, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

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

export interface Store {
  readonly db: Kysely<Database>;
  readonly caps: DialectCapabilities;
  /**
   * Run fn in one transaction. `lock` names a critical section (e.g. path ownership): PostgreSQL
   * takes a transaction-scoped advisory lock on it; SQLite needs none since it has one writer.
   */
  transaction<T>(fn: (trx: Transaction<Database>) => Promise<T>, options?: { lock?: string }): Promise<T>;
  /** Throws when the database cannot be reached (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export async function openStore(config: Config['store'], log: Logger): Promise<Store> {
  // The PostgreSQL driver is loaded only when the URL asks for it (bullmq's create-postgres-backend).
  const store = config.databaseUrl
    ? await (await import('./postgres.js')).openPostgres(config.databaseUrl)
    : await (await import('./sqlite.js')).openSqlite(config);
  try {
    await migrate(store, log);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

export async function migrate(store: Store, log: Logger): Promise<void> {
  const migrator = new Migrator({
    db: store.db,
    provider: migrationProvider(store.caps),
    migrationTableName: 'hookflow_migrations',
    migrationLockTableName: 'hookflow_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  for (const r of results ?? []) {
    if (r.status === 'Success') log.info({ migration: r.migrationName }, 'migration applied');
  }
  if (error)
    throw new Error(`Database migration failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
}
