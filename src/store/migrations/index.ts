/**
 * Migrations, one source for both dialects. They use only portable Kysely schema-builder types;
 * the one dialect difference (the binary column type) comes in through the capability flags.
 * Kysely's Migrator serialises concurrent runs: on PostgreSQL with an advisory lock
 * (PostgresAdapter.acquireMigrationLock), on SQLite it is a no-op because the database file allows
 * one writer at a time anyway. The migrations themselves are in foundation.ts (0001–0015) and
 * extensions.ts (from 0016).
 */
import type { MigrationProvider } from 'kysely';
import type { DialectCapabilities } from '../store.js';
import { extensionMigrations } from './extensions.js';
import { foundationMigrations } from './foundation.js';

const migrations = { ...foundationMigrations, ...extensionMigrations };

export function migrationProvider(caps: DialectCapabilities): MigrationProvider {
  return {
    async getMigrations() {
      return Object.fromEntries(Object.entries(migrations).map(([name, make]) => [name, make(caps)]));
    },
  };
}
