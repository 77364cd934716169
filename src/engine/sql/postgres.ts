/**
 * PostgreSQL for `sql` steps, through `pg` (loaded on first use).
 *
 * Parameters only: the extended protocol (Parse with the text, Bind with the values) carries the
 * values apart from the statement.
 *
 * Bounded rows: the portal is executed with a row limit of maxRows + 1 (the protocol's own cursor),
 * and closed at once when the server suspends it: the rest is never sent.
 *
 * Time: the pooled connection's `statement_timeout` is set to `timeoutMs` (the server cancels by
 * itself, SQLSTATE 57014), and past it plus a grace the client sends a cancel request and drops
 * the connection.
 */
import net from 'node:net';
import { guardedLookup, type NetworkPolicy, OPEN_NETWORK } from '../network.js';
import {
  CANCEL_GRACE_MS,
  Cancelled,
  CONNECT_TIMEOUT_MS,
  type DbConfig,
  guarded,
  IDLE_MS,
  integer,
  jsonValue,
  POOL_SIZE,
  type Pool,
  refused,
  type SqlOutput,
} from './connection.js';

type Pg = typeof import('pg').default;
let pgModule: Promise<Pg> | undefined;
/** pg, loaded when the first sql step runs (not in every thread that has an engine). */
const loadPg = (): Promise<Pg> => {
  pgModule ??= import('pg').then((m) => m.default);
  return pgModule;
};

export async function openPostgres(c: DbConfig, policy: NetworkPolicy): Promise<Pool> {
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
