import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { type DialectCapabilities, kyselyHotStatements, runHotWrites, type Store } from './store.js';

const CAPS: DialectCapabilities = { name: 'postgres', binaryType: 'bytea', skipLocked: true, shared: true };

export async function openPostgres(url: string): Promise<Store> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const hot = kyselyHotStatements();
  return {
    db,
    caps: CAPS,
    hot,
    runsPure: false,
    writeHot: (writes) => db.transaction().execute((trx) => runHotWrites(hot, trx, writes)),
    transaction: (fn, options) =>
      db.transaction().execute(async (trx) => {
        if (options?.lock) await sql`select pg_advisory_xact_lock(hashtext(${options.lock}))`.execute(trx);
        return fn(trx);
      }),
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}
