import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from './schema.js';
import type { DialectCapabilities, Store } from './store.js';

const CAPS: DialectCapabilities = { name: 'sqlite', binaryType: 'blob', skipLocked: false, shared: false };

export const SQLITE_FILE = 'hookflow.sqlite';

export async function openSqlite(config: Config['store']): Promise<Store> {
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const database = new SqliteDatabase(path.join(config.dataDir, SQLITE_FILE));
  // WAL lets readers (API, UI) run beside the one writer. synchronous=FULL fsyncs the WAL on every
  // commit, so a 2xx survives even power loss; group commit (ingest.ts) amortises that fsync.
  database.pragma('journal_mode = WAL');
  database.pragma(`synchronous = ${config.sqliteSynchronous}`);
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return {
    db,
    caps: CAPS,
    // SQLite has one writer, so a named lock has nothing to add to the transaction itself.
    transaction: (fn) => db.transaction().execute(fn),
    async ping() {
      database.prepare('select 1').get();
    },
    async close() {
      await db.destroy();
    },
  };
}
