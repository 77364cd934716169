/**
 * The PostgreSQL store (distributed mode). Besides the dialect, this file owns what a lost
 * database connection does to the process: it must never kill it, and a request whose write could
 * not be committed must get a 503, never a 2xx or a 500.
 *
 * node-postgres emits `'error'` on a client whose connection breaks. The pool listens only while a
 * client is idle (`pool.on('error')`); a client that is checked out when the server goes away (a
 * restart under load: most clients are) emits with no listener, and Node kills the process. So
 * every client gets a listener of its own as the pool creates it. Its queries fail and the pool
 * drops it on release (it is no longer queryable); the next `connect()` opens a fresh one, so the
 * process reconnects by itself once the server is back.
 */
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient, sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from '../schema.js';
import { kyselyHotStatements } from '../hot-writes.js';
import type { DialectCapabilities, Store } from '../store.js';
import { isStoreUnavailable, storeUnavailable } from '../unavailable.js';
import { writeHotBatch } from './hot-writes.js';

const CAPS: DialectCapabilities = { name: 'postgres', binaryType: 'bytea', skipLocked: true, shared: true };

/**
 * A connection attempt that gets no answer (a host gone from the network, not a refused port) is
 * abandoned after this long, so requests fail with a 503 instead of hanging for the OS's TCP timeout.
 */
const CONNECT_TIMEOUT_MS = 5_000;

export async function openPostgres(url: string, log?: Logger): Promise<Store> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // Finds a peer that vanished without a reset (failover, cable) while a client waits on it.
    keepAlive: true,
  });
  // One warning per outage, not one per broken client (a restart breaks all ten at once); the
  // first connection opened after it closes the outage.
  let lostAt: number | undefined;
  const lost = (err: Error) => {
    if (lostAt !== undefined) return;
    lostAt = Date.now();
    log?.warn({ err }, 'database connection lost; reconnecting on demand');
  };
  pool.on('connect', (client) => {
    client.on('error', lost);
    if (lostAt !== undefined) {
      log?.info({ outageMs: Date.now() - lostAt }, 'database connection back');
      lostAt = undefined;
    }
  });
  // Idle clients report through the pool too (its own listener, removed while checked out).
  pool.on('error', lost);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: unavailableAs503(pool) }) });
  const hot = kyselyHotStatements();
  return {
    db,
    caps: CAPS,
    hot,
    // One statement per batch on the pool's own connections (hot-writes.ts), not through Kysely.
    writeHot: (writes) =>
      writeHotBatch(pool, writes).catch((err: unknown) => {
        throw asUnavailable(err);
      }),
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

/**
 * The pool as Kysely sees it, with every failure that means "the database cannot be reached" (a
 * transaction that lost its connection, a refused or timed-out connect; unavailable.ts decides)
 * turned into 503 `store_unavailable`, whichever query met it: group commit maps its writes too,
 * but a request's reads and other statements (rate limits, test listeners, waiting for a result)
 * would otherwise answer 500. Kysely offers no hook for a driver's errors, hence this thin wrapper.
 */
function unavailableAs503(pool: pg.Pool): PostgresPool {
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let w = wrapped.get(client);
    if (!w) {
      w = {
        // Kysely calls query(text, params) only (no cursor is configured, so no streaming).
        query: ((text: string, params: unknown[]) =>
          client.query(text, params).catch((err: unknown) => {
            throw asUnavailable(err);
          })) as unknown as PostgresPoolClient['query'],
        release: () => client.release(),
      };
      wrapped.set(client, w);
    }
    return w;
  };
  return {
    async connect() {
      try {
        return wrap(await pool.connect());
      } catch (err) {
        throw asUnavailable(err);
      }
    },
    end: () => pool.end(),
  };
}

function asUnavailable(err: unknown): unknown {
  return isStoreUnavailable(err) ? storeUnavailable(err) : err;
}
