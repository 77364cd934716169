/**
 * The database side of `sql` steps (steps/sql.ts, SPEC 7e): connection pools per credential, to
 * PostgreSQL (postgres.ts) and MySQL/MariaDB (mysql.ts); what both share is in connection.ts.
 *
 * Parameters only, bounded rows (at most `maxRows`, default 1 000; `truncated` says more were
 * there) and `timeoutMs` cancelling the statement on the server: each driver's file says how.
 *
 * Pools. Each credential has a small pool (POOL_SIZE connections) in the engine (`SqlPools`),
 * keyed by the credential's id and a digest of its data: a run with rotated data gets a new pool
 * and the old one is closed once its statements are done; `forget` (a credential changed or was
 * deleted: the executor is told over the bus) and `close` (shutdown) close them too.
 *
 * Network. A database is usually on a private network, but a credential is written by any editor:
 * connections follow the `http` step's policy (public addresses only unless
 * HOOKFLOW_ALLOW_PRIVATE_NETWORK=true), except the private ranges an operator lists in
 * HOOKFLOW_SQL_PRIVATE_NETWORKS (CIDR), which `sql` steps may reach. Checked on the address
 * actually connected to (the DNS lookup of each connection), as for `http`.
 *
 * Errors: the drivers' own (pg's DatabaseError, mysql2's with code, errno and sqlState), which
 * steps/sql.ts turns into the step's failure.
 */
import { createHash } from 'node:crypto';
import { cidrMatcher } from '../../model/cidr.js';
import type { RunCredential } from '../credentials.js';
import { type NetworkPolicy, OPEN_NETWORK, publicNetworkOnly } from '../network.js';
import type { DbConfig, Pool, SqlOutput, SqlQuery } from './connection.js';
import { openMysql } from './mysql.js';
import { openPostgres } from './postgres.js';

export { Cancelled, POOL_SIZE, type SqlOutput, type SqlQuery } from './connection.js';

/** A pool and the statements running on it: retired (credential changed), it ends when they are done. */
interface Entry {
  digest: string;
  pool: Promise<Pool>;
  active: number;
  retired: boolean;
  ended?: Promise<void>;
}

/** The sql steps' connection pools of one engine: one small pool per credential (see the header). */
export class SqlPools {
  readonly #policy: NetworkPolicy;
  readonly #entries = new Map<string, Entry>();
  #closed = false;

  constructor(policy: NetworkPolicy) {
    this.#policy = policy;
  }

  async query(id: string, cred: RunCredential, q: SqlQuery): Promise<SqlOutput> {
    if (this.#closed) throw new Error('the engine is closing');
    const digest = createHash('sha256')
      .update(JSON.stringify([cred.type, cred.data]))
      .digest('hex');
    let entry = this.#entries.get(id);
    if (entry && entry.digest !== digest) {
      // Rotated since this pool was made (the bus notice may not have arrived yet).
      void this.#retire(entry);
      entry = undefined;
    }
    if (!entry) {
      entry = { digest, pool: open(cred, this.#policy), active: 0, retired: false };
      // A pool that could not even be made (a module failed to load) is not kept.
      entry.pool.catch(() => this.#entries.get(id) === entry && this.#entries.delete(id));
      this.#entries.set(id, entry);
    }
    entry.active++;
    try {
      return await (await entry.pool).query(q);
    } finally {
      entry.active--;
      if (entry.retired && entry.active === 0) void this.#end(entry);
    }
  }

  /** The credential changed or was deleted: its pool closes (once its running statements are done). */
  forget(id: string): Promise<void> {
    const entry = this.#entries.get(id);
    if (!entry) return Promise.resolve();
    this.#entries.delete(id);
    return this.#retire(entry);
  }

  /** Shutdown: every pool closes (statements still running are cut off). */
  async close(): Promise<void> {
    this.#closed = true;
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(entries.map((e) => this.#end(e)));
  }

  /** How many pools are open (tests). */
  get size(): number {
    return this.#entries.size;
  }

  #retire(entry: Entry): Promise<void> {
    entry.retired = true;
    return entry.active === 0 ? this.#end(entry) : Promise.resolve();
  }

  #end(entry: Entry): Promise<void> {
    entry.ended ??= entry.pool.then(
      (p) => p.end().catch(() => undefined),
      () => undefined,
    );
    return entry.ended;
  }
}

/**
 * The policy of `sql` steps: the `http` step's (`allowPrivateNetwork`), with the private ranges in
 * `privateNetworks` (HOOKFLOW_SQL_PRIVATE_NETWORKS) allowed besides.
 */
export function sqlNetworkPolicy(
  allowPrivateNetwork: boolean,
  privateNetworks: readonly string[] = [],
): NetworkPolicy {
  if (allowPrivateNetwork) return OPEN_NETWORK;
  const base = publicNetworkOnly();
  if (privateNetworks.length === 0) return base;
  const allowed = cidrMatcher(privateNetworks);
  return { refuse: (address) => (allowed(address) ? undefined : base.refuse(address)) };
}

function open(cred: RunCredential, policy: NetworkPolicy): Promise<Pool> {
  const d = cred.data;
  const config: DbConfig = {
    host: String(d.host ?? ''),
    port: Number(d.port ?? (cred.type === 'postgres' ? 5432 : 3306)),
    database: String(d.database ?? ''),
    user: String(d.username ?? ''),
    password: String(d.password ?? ''),
    ssl: d.ssl === true || d.ssl === 'true' ? 'verify' : d.ssl === 'no-verify' ? 'no-verify' : 'off',
  };
  return cred.type === 'postgres' ? openPostgres(config, policy) : openMysql(config, policy);
}
