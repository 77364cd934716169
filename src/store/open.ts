/**
 * Opening the store: the dialect the configuration asks for (the PostgreSQL driver is loaded only
 * then), migrated to the latest schema.
 */
import { Migrator } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { migrationProvider } from './migrations/index.js';
import type { Store } from './store.js';

export async function openStore(config: Config['store'], log: Logger): Promise<Store> {
  // The PostgreSQL driver is loaded only when the URL asks for it (bullmq's create-postgres-backend).
  const store = config.databaseUrl
    ? await (await import('./postgres/store.js')).openPostgres(config.databaseUrl, log)
    : await (await import('./sqlite/store.js')).openSqlite(config, log);
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
    // Migrations are named by number, but work made in parallel can land a lower number after a
    // higher one: a database that already ran the higher one still takes the lower one.
    allowUnorderedMigrations: true,
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
