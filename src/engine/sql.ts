/**
 * The database side of `sql` steps (steps/sql.ts, SPEC 7e): connection pools per credential,
 * PostgreSQL through `pg` and MySQL/MariaDB through `mysql2`, loaded on first use.
 *
 * Parameters only: PostgreSQL's extended protocol (Parse with the text, Bind with the values) and
 * MySQL's server-side prepared statements (`execute`) carry the values apart from the statement.
 *
 * Bounded rows. At most `maxRows` (default 1 000) rows are held; `truncated` says more were there.
 * PostgreSQL: the portal is executed with a row limit of maxRows + 1 (the protocol's own cursor),
 * and closed at once when the server suspends it: the rest is never sent. MySQL has no such limit
 * for a result set: rows are read one at a time, and at row maxRows + 1 the connection stops
 * reading and is closed (dropped from its pool; the server's thread ends as its write fails).
 *
 * Time. `timeoutMs` (default 10 000) cancels the statement on the server. PostgreSQL: the pooled
 * connection's `statement_timeout` is set to it (the server cancels by itself, SQLSTATE 57014),
 * and past it plus a grace the client sends a cancel request and drops the connection. MySQL and
 * MariaDB (whose `max_execution_time` / `max_statement_time` differ, and cover SELECT only on
 * MySQL): a second connection sends `KILL QUERY <thread id>` when the time is up. When the
 * execution's own budget runs out, the statement is cancelled the same way at once.
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
 * Values. Integers (bigint included) are numbers while they are safe integers, text beyond;
 * numeric/decimal are text (exact); float as numbers; booleans; json as JSON; dates `YYYY-MM-DD`,
 * timestamps as ISO-8601 (with `Z` when the type has a zone: PostgreSQL timestamptz, MySQL
 * TIMESTAMP), binary (bytea, BLOB) as base64 text.
 *
 * Errors: the drivers' own (pg's DatabaseError, mysql2's with code, errno and sqlState), which
 * steps/sql.ts turns into the step's failure.
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import { cidrMatcher } from '../model/cidr.js';
import type { RunCredential } from './credentials.js';
import { guardedLookup, type NetworkPolicy, OPEN_NETWORK, publicNetworkOnly } from './network.js';

/** Connections one credential's pool opens at most (per engine thread). */
export const POOL_SIZE = 4;
/** An idle pooled connection is closed after this. */
const IDLE_MS = 30_000;
/** Connecting (TCP, TLS, login) may take this long. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Past timeoutMs, how long the server gets to cancel by itself before the client cancels and drops the connection. */
const CANCEL_GRACE_MS = 1_000;

export interface SqlOutput {
  rows: Record<string, unknown>[];
  rowCount: number;
  truncated: boolean;
}

export interface SqlQuery {
  text: string;
  params: unknown[];
  maxRows: number;
  timeoutMs: number;
  /** The execution's budget: aborted, the statement is cancelled on the server. */
  signal: AbortSignal;
}

/** Why a statement ended early, set by this module (the driver's own error is the cause). */
export class Cancelled extends Error {
  constructor(readonly why: 'timeout' | 'aborted') {
    super(why);
  }
}

/** The step's failure for what a query threw: the server's message and code, no stack. */

// ---------------------------------------------------------------------------------------------
// Pools

interface Pool {
  query(q: SqlQuery): Promise<SqlOutput>;
  end(): Promise<void>;
}

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

interface DbConfig {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  ssl: 'off' | 'verify' | 'no-verify';
}

/** A TCP socket whose connect checks the address against the policy (DNS lookup and IP literals). */
function guardedSocket(policy: NetworkPolicy, host: string, port: number): net.Socket {
  if (policy === OPEN_NETWORK) return net.connect({ host, port });
  const why = net.isIP(host) === 0 ? undefined : policy.refuse(host);
  if (why) {
    const socket = new net.Socket();
    process.nextTick(() => socket.destroy(refused(host, host, why)));
    return socket;
  }
  return net.connect({ host, port, lookup: guardedLookup(policy) as never });
}

function refused(host: string, address: string, why: string): Error {
  const err = new Error(
    `Refused to connect to ${host === address ? address : `${host} (${address})`}: it is ${why}. Outbound requests reach public addresses only.`,
  );
  err.name = 'NetworkRefused';
  return err;
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL (pg)

type Pg = typeof import('pg').default;
let pgModule: Promise<Pg> | undefined;
/** pg, loaded when the first sql step runs (not in every thread that has an engine). */
const loadPg = (): Promise<Pg> => {
  pgModule ??= import('pg').then((m) => m.default);
  return pgModule;
};

async function openPostgres(c: DbConfig, policy: NetworkPolicy): Promise<Pool> {
  const pg = await loadPg();
  pgTypes = pg.types;
  const settings = {
    host: c.host,
    port: c.port,
    database: c.database,
    user: c.user,
    password: c.password,
    ssl: c.ssl === 'off' ? false : { rejectUnauthorized: c.ssl === 'verify', servername: c.host },
    application_name: 'hookflow',
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    // pg calls socket.connect(port, host) itself: it connects through the policy instead.
    stream: () => pgSocket(policy),
  };
  const pool = new pg.Pool({ ...settings, max: POOL_SIZE, idleTimeoutMillis: IDLE_MS });
  // An idle connection the server ended (restart, idle timeout) must not take the thread down.
  pool.on('error', () => undefined);
  const timeouts = new WeakMap<object, number>();
  return {
    async query(q) {
      const client = await pool.connect();
      let broken = false;
      const cancel = (why: Cancelled['why']) => {
        cancelRequest(pg, c, policy, client);
        return new Cancelled(why);
      };
      try {
        if (timeouts.get(client) !== q.timeoutMs) {
          await client.query(`set statement_timeout = ${Math.floor(q.timeoutMs)}`);
          timeouts.set(client, q.timeoutMs);
        }
        const run = new Bounded(q.text, q.params.map(pgParam), q.maxRows);
        const result = guarded(run.done, q, {
          onAbort: () => cancel('aborted'),
          // The server cancels at timeoutMs by itself; this is for a server (or network) that does not answer.
          onLate: () => cancel('timeout'),
          lateMs: q.timeoutMs + CANCEL_GRACE_MS,
          giveUp: () => {
            broken = true;
          },
        });
        client.query(run);
        return await result;
      } catch (err) {
        if (err instanceof Cancelled) broken = true;
        else if ((err as { code?: string }).code === '57014')
          throw new Cancelled(q.signal.aborted ? 'aborted' : 'timeout');
        throw err;
      } finally {
        // A statement that left a transaction open (BEGIN) must not hand it to the next step.
        if (!broken && client.getTransactionStatus?.() !== 'I') broken = true;
        client.release(broken);
      }
    },
    end: () => pool.end(),
  };
}

/** A socket for pg, whose connect(port, host) goes through the policy (pg calls it itself). */
function pgSocket(policy: NetworkPolicy): net.Socket {
  const socket = new net.Socket();
  if (policy === OPEN_NETWORK) return socket;
  const connect = socket.connect.bind(socket);
  socket.connect = ((port: unknown, host: unknown) => {
    const h = String(host);
    // A Unix socket (one argument, a path) is local by definition.
    const why =
      typeof port !== 'number' && !/^\d+$/.test(String(port))
        ? 'a local socket'
        : net.isIP(h) === 0
          ? undefined
          : policy.refuse(h);
    if (why) {
      process.nextTick(() => socket.destroy(refused(h, h, why)));
      return socket;
    }
    return connect({ port: Number(port), host: h, lookup: guardedLookup(policy) as never });
  }) as never;
  return socket;
}

/**
 * PostgreSQL's cancel request for the statement running on `client` (what pg's Client.cancel
 * sends), on a connection of its own that the server closes once it has read it.
 */
function cancelRequest(pg: Pg, c: DbConfig, policy: NetworkPolicy, client: unknown): void {
  const { processID, secretKey } = client as { processID: number; secretKey: number };
  const Connection = (pg as unknown as { Connection: new (o: object) => CancelConnection }).Connection;
  const con = new Connection({ stream: () => pgSocket(policy) });
  con.on('error', () => undefined);
  con.once('connect', () => con.cancel(processID, secretKey));
  con.connect(c.port, c.host);
  setTimeout(() => con.stream.destroy(), CANCEL_GRACE_MS).unref();
}

interface CancelConnection {
  stream: net.Socket;
  on(event: string, f: () => void): void;
  once(event: string, f: () => void): void;
  connect(port: number, host: string): void;
  cancel(processID: number, secretKey: number): void;
}

/**
 * Waits for `done` while watching the execution's signal and a late timer: each cancels the
 * statement (`onAbort`/`onLate` answer the error to fail with); if the statement still does not
 * end within CANCEL_GRACE_MS, `giveUp` drops the connection and the step fails anyway.
 */
function guarded<T>(
  done: Promise<T>,
  q: SqlQuery,
  opts: { onAbort: () => Error; onLate: () => Error; lateMs: number; giveUp: () => void },
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let stop: Error | undefined;
    let last: NodeJS.Timeout | undefined;
    const halt = (make: () => Error) => {
      if (stop) return;
      stop = make();
      last = setTimeout(() => {
        opts.giveUp();
        reject(stop);
      }, CANCEL_GRACE_MS);
    };
    const onAbort = () => halt(opts.onAbort);
    const late = setTimeout(() => halt(opts.onLate), opts.lateMs);
    if (q.signal.aborted) onAbort();
    else q.signal.addEventListener('abort', onAbort, { once: true });
    const settle = () => {
      clearTimeout(late);
      clearTimeout(last);
      q.signal.removeEventListener('abort', onAbort);
    };
    done.then(
      (v) => {
        settle();
        if (stop) reject(stop);
        else resolve(v);
      },
      (err: unknown) => {
        settle();
        reject(stop ?? err);
      },
    );
  });
}

/** A parameter as PostgreSQL's text format takes it (what pg would send; arrays as PostgreSQL arrays). */
function pgParam(v: unknown): string | Buffer | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return pgArray(v);
  return JSON.stringify(v);
}

function pgArray(values: unknown[]): string {
  const items = values.map((v) => {
    if (v === null || v === undefined) return 'NULL';
    if (Array.isArray(v)) return pgArray(v);
    const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
    return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  });
  return `{${items.join(',')}}`;
}

interface PgField {
  name: string;
  dataTypeID: number;
}

interface PgConnection {
  parse(msg: { text: string }): void;
  bind(msg: { values: (string | Buffer | null)[] }): void;
  describe(msg: { type: 'P'; name: string }): void;
  execute(msg: { portal: string; rows: number }): void;
  flush(): void;
  sync(): void;
  sendCopyFail(msg: string): void;
}

/**
 * One statement through pg's query queue, with the extended protocol's row limit: Parse, Bind,
 * Describe, Execute(maxRows + 1), Flush. A suspended portal (more rows than that) is closed by a
 * Sync at once; its other rows are never sent (pg-cursor's technique, without reading on).
 */
class Bounded {
  readonly done: Promise<SqlOutput>;
  #resolve!: (out: SqlOutput) => void;
  #reject!: (err: unknown) => void;
  readonly #rows: Record<string, unknown>[] = [];
  #fields: { name: string; parse: (text: string) => unknown }[] = [];
  #truncated = false;
  #rowCount: number | undefined;
  #error: unknown;
  #synced = false;
  callback?: unknown;

  constructor(
    readonly text: string,
    readonly values: (string | Buffer | null)[],
    readonly maxRows: number,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  submit(con: PgConnection): null {
    con.parse({ text: this.text });
    con.bind({ values: this.values });
    con.describe({ type: 'P', name: '' });
    con.execute({ portal: '', rows: this.maxRows + 1 });
    con.flush();
    return null;
  }

  #sync(con: PgConnection): void {
    if (this.#synced) return;
    this.#synced = true;
    con.sync();
  }

  handleRowDescription(msg: { fields: PgField[] }): void {
    this.#fields = msg.fields.map((f) => ({ name: f.name, parse: pgParser(f.dataTypeID) }));
  }

  handleDataRow(msg: { fields: (string | null)[] }): void {
    if (this.#rows.length >= this.maxRows) {
      this.#truncated = true;
      return;
    }
    try {
      this.#rows.push(
        Object.fromEntries(
          this.#fields.map((f, i) => {
            const raw = msg.fields[i];
            return [f.name, raw === null || raw === undefined ? null : f.parse(raw)];
          }),
        ),
      );
    } catch (err) {
      this.#error ??= err;
    }
  }

  handlePortalSuspended(con: PgConnection): void {
    this.#truncated = true;
    this.#sync(con);
  }

  handleCommandComplete(msg: { text?: string }, con: PgConnection): void {
    const count = /(\d+)$/.exec(msg.text ?? '');
    if (count) this.#rowCount = Number(count[1]);
    this.#sync(con);
  }

  handleEmptyQuery(con: PgConnection): void {
    this.#sync(con);
  }

  handleCopyInResponse(con: PgConnection): void {
    con.sendCopyFail('COPY FROM STDIN is not supported by the sql step');
  }

  handleCopyData(): void {}

  /** pg drops the query on an error (no handleReadyForQuery follows): it ends here. */
  handleError(err: unknown, con: PgConnection): void {
    // An error from the server waits for a Sync; a broken connection has nothing to sync.
    if (typeof (err as { severity?: unknown }).severity === 'string') this.#sync(con);
    this.#reject(this.#error ?? err);
  }

  handleReadyForQuery(): void {
    if (this.#error !== undefined) {
      this.#reject(this.#error);
      return;
    }
    const rows = this.#rows;
    const rowCount = this.#truncated ? rows.length : Math.max(this.#rowCount ?? rows.length, rows.length);
    this.#resolve({ rows, rowCount, truncated: this.#truncated });
  }
}

const SAFE = (n: bigint) => n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER);

/** Integer text: a number while it is a safe integer, the text beyond. */
function integer(text: string): number | string {
  return SAFE(BigInt(text)) ? Number(text) : text;
}

let pgTypes: Pg['types'] | undefined;

/** How a column's text becomes JSON (see the header's Values). */
function pgParser(oid: number): (text: string) => unknown {
  switch (oid) {
    case 16: // bool
      return (t) => t === 't';
    case 20: // int8
      return integer;
    case 21: // int2
    case 23: // int4
    case 26: // oid
      return Number;
    case 700: // float4
    case 701: // float8
      return (t) => (Number.isFinite(Number(t)) ? Number(t) : t);
    case 1700: // numeric: exact, as text
    case 1082: // date
    case 1083: // time
    case 1266: // timetz
      return (t) => t;
    case 114: // json
    case 3802: // jsonb
      return (t) => JSON.parse(t);
    case 17: // bytea, hex format
      return (t) => (t.startsWith('\\x') ? Buffer.from(t.slice(2), 'hex').toString('base64') : t);
    case 1114: // timestamp: no zone
      return (t) => (/^\d{4}-/.test(t) ? t.replace(' ', 'T') : t);
    case 1184: // timestamptz
      return (t) => {
        const d = pgTypes!.getTypeParser(1184, 'text')(t) as Date;
        return d instanceof Date && !Number.isNaN(d.getTime()) ? d.toISOString() : t;
      };
    default: {
      // Arrays and the rest: pg's own parser (loaded by then), made JSON-friendly.
      if (!pgTypes) return (t) => t;
      const parse = pgTypes.getTypeParser(oid, 'text') as (t: string) => unknown;
      return (t) => jsonValue(parse(t));
    }
  }
}

/** A driver's value as JSON takes it: Dates as ISO text, bytes as base64, bigints as in `integer`. */
function jsonValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return SAFE(v) ? Number(v) : String(v);
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v !== 'object') return v;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (Array.isArray(v)) return v.map(jsonValue);
  const iso = (v as { toISOString?: () => string }).toISOString;
  if (typeof iso === 'function') return iso.call(v);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonValue(x)]));
}

// ---------------------------------------------------------------------------------------------
// MySQL / MariaDB (mysql2)

type Mysql = typeof import('mysql2');
let mysqlModule: Promise<Mysql> | undefined;
const loadMysql = (): Promise<Mysql> => {
  // CommonJS: its exports are the namespace's default.
  mysqlModule ??= import('mysql2').then((m) => (m as unknown as { default?: Mysql }).default ?? m);
  return mysqlModule;
};

/** mysql2's column types that are dates or times (Types: DATE 10, DATETIME 12, TIMESTAMP 7, and the …2 forms). */
const MYSQL_TIMESTAMP = new Set([7, 17]);
const MYSQL_DATETIME = new Set([12, 18]);

async function openMysql(c: DbConfig, policy: NetworkPolicy): Promise<Pool> {
  const mysql = await loadMysql();
  const settings = {
    host: c.host,
    port: c.port,
    database: c.database,
    user: c.user,
    password: c.password,
    ...(c.ssl === 'off' ? {} : { ssl: { rejectUnauthorized: c.ssl === 'verify' } }),
    connectTimeout: CONNECT_TIMEOUT_MS,
    supportBigNumbers: true,
    bigNumberStrings: false,
    decimalNumbers: false,
    dateStrings: true,
    multipleStatements: false,
    enableKeepAlive: true,
    stream: () => guardedSocket(policy, c.host, c.port),
  };
  const pool = mysql.createPool({
    ...settings,
    connectionLimit: POOL_SIZE,
    maxIdle: POOL_SIZE,
    idleTimeout: IDLE_MS,
  });
  // TIMESTAMP values are read in UTC (shown with Z); DATETIME has no zone and is read as stored.
  pool.on('connection', (conn) => {
    conn.query("SET time_zone = '+00:00'");
  });
  const killQuery = async (threadId: number): Promise<void> => {
    const killer = mysql.createConnection(settings);
    killer.on('error', () => undefined);
    await killer.promise().query(`KILL QUERY ${Math.floor(threadId)}`);
    await killer.promise().end();
  };
  return {
    async query(q) {
      const conn = await new Promise<import('mysql2').PoolConnection>((resolve, reject) =>
        pool.getConnection((err, c) => (err ? reject(err) : resolve(c))),
      );
      let drop = false;
      let killing: Promise<void> | undefined;
      const cancel = (why: Cancelled['why']) => {
        killing ??= killQuery(conn.threadId).catch(() => {
          drop = true;
        });
        return new Cancelled(why);
      };
      try {
        const done = new Promise<SqlOutput>((resolve, reject) => {
          const rows: Record<string, unknown>[] = [];
          let fields: { name: string; kind: 'ts' | 'dt' | undefined }[] = [];
          let rowCount: number | undefined;
          let ended = false;
          const cmd = conn.execute({ sql: q.text, values: q.params.map(mysqlParam) as never });
          const emitter = cmd as unknown as NodeJS.EventEmitter;
          emitter.on('fields', (list: { name: string; columnType?: number; type?: number }[]) => {
            fields = (list ?? []).map((f) => {
              const t = f.columnType ?? f.type;
              const kind =
                t === undefined
                  ? undefined
                  : MYSQL_TIMESTAMP.has(t)
                    ? 'ts'
                    : MYSQL_DATETIME.has(t)
                      ? 'dt'
                      : undefined;
              return { name: f.name, kind };
            });
          });
          emitter.on('result', (row: unknown) => {
            if (ended) return;
            if (Array.isArray(row) || row === null || typeof row !== 'object') return;
            if ('affectedRows' in row && fields.length === 0) {
              const header = row as { affectedRows: number; serverStatus?: number };
              rowCount = Number(header.affectedRows);
              // SERVER_STATUS_IN_TRANS: the statement left a transaction open (BEGIN); it must
              // not reach the next step on this connection: closed, the server rolls it back.
              if ((header.serverStatus ?? 0) & 1) drop = true;
              return;
            }
            if (rows.length >= q.maxRows) {
              // More than maxRows: stop reading; the connection is closed (the rest is never read).
              ended = true;
              drop = true;
              conn.pause();
              resolve({ rows, rowCount: rows.length, truncated: true });
              return;
            }
            const r = row as Record<string, unknown>;
            rows.push(
              Object.fromEntries(
                fields.map((f) => {
                  const v = r[f.name];
                  if (typeof v === 'string' && f.kind && /^\d{4}-/.test(v))
                    return [f.name, f.kind === 'ts' ? `${v.replace(' ', 'T')}Z` : v.replace(' ', 'T')];
                  return [f.name, jsonValue(v)];
                }),
              ),
            );
          });
          emitter.on('error', (err: unknown) => {
            if (!ended) reject(err);
            ended = true;
          });
          emitter.on('end', () => {
            if (!ended) resolve({ rows, rowCount: rowCount ?? rows.length, truncated: false });
            ended = true;
          });
        });
        return await guarded(done, q, {
          onAbort: () => cancel('aborted'),
          onLate: () => cancel('timeout'),
          lateMs: q.timeoutMs,
          giveUp: () => {
            drop = true;
          },
        });
      } catch (err) {
        if (err instanceof Cancelled) {
          // Wait for the kill to be done, so the server's statement is gone when the step fails.
          await killing;
          // 1317: the statement was interrupted (by the kill); the connection is fine.
        }
        throw err;
      } finally {
        if (drop) conn.destroy();
        else conn.release();
      }
    },
    end: () => new Promise<void>((resolve) => pool.end(() => resolve())),
  };
}

/** A parameter as mysql2 binds it: objects and arrays as JSON text, booleans as 1/0. */
function mysqlParam(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'object' && !Buffer.isBuffer(v)) return JSON.stringify(v);
  return v;
}
