/**
 * What both drivers of the `sql` step share (pools.ts says how the parts fit): the query and its
 * output, the pool a driver opens, the network-guarded socket, the cancel watch and values as JSON.
 *
 * Time. `timeoutMs` (default 10 000) cancels the statement on the server; each driver says how
 * (postgres.ts, mysql.ts). When the execution's own budget runs out, the statement is cancelled
 * the same way at once. `guarded` watches both.
 *
 * Values. Integers (bigint included) are numbers while they are safe integers, text beyond;
 * numeric/decimal are text (exact); float as numbers; booleans; json as JSON; dates `YYYY-MM-DD`,
 * timestamps as ISO-8601 (with `Z` when the type has a zone: PostgreSQL timestamptz, MySQL
 * TIMESTAMP), binary (bytea, BLOB) as base64 text.
 */
import net from 'node:net';
import { guardedLookup, type NetworkPolicy, OPEN_NETWORK } from '../network.js';

/** Connections one credential's pool opens at most (per engine thread). */
export const POOL_SIZE = 4;
/** An idle pooled connection is closed after this. */
export const IDLE_MS = 30_000;
/** Connecting (TCP, TLS, login) may take this long. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** Past timeoutMs, how long the server gets to cancel by itself before the client cancels and drops the connection. */
export const CANCEL_GRACE_MS = 1_000;

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

/** Why a statement ended early, set by the drivers (the driver's own error is the cause). */
export class Cancelled extends Error {
  constructor(readonly why: 'timeout' | 'aborted') {
    super(why);
  }
}

/** A driver's pool of connections to one database. */
export interface Pool {
  query(q: SqlQuery): Promise<SqlOutput>;
  end(): Promise<void>;
}

export interface DbConfig {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  ssl: 'off' | 'verify' | 'no-verify';
}

/** A TCP socket whose connect checks the address against the policy (DNS lookup and IP literals). */
export function guardedSocket(policy: NetworkPolicy, host: string, port: number): net.Socket {
  if (policy === OPEN_NETWORK) return net.connect({ host, port });
  const why = net.isIP(host) === 0 ? undefined : policy.refuse(host);
  if (why) {
    const socket = new net.Socket();
    process.nextTick(() => socket.destroy(refused(host, host, why)));
    return socket;
  }
  return net.connect({ host, port, lookup: guardedLookup(policy) as never });
}

export function refused(host: string, address: string, why: string): Error {
  const err = new Error(
    `Refused to connect to ${host === address ? address : `${host} (${address})`}: it is ${why}. Outbound requests reach public addresses only.`,
  );
  err.name = 'NetworkRefused';
  return err;
}

/**
 * Waits for `done` while watching the execution's signal and a late timer: each cancels the
 * statement (`onAbort`/`onLate` answer the error to fail with); if the statement still does not
 * end within CANCEL_GRACE_MS, `giveUp` drops the connection and the step fails anyway.
 */
export function guarded<T>(
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

export const SAFE = (n: bigint) =>
  n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER);

/** Integer text: a number while it is a safe integer, the text beyond. */
export function integer(text: string): number | string {
  return SAFE(BigInt(text)) ? Number(text) : text;
}

/** A driver's value as JSON takes it: Dates as ISO text, bytes as base64, bigints as in `integer`. */
export function jsonValue(v: unknown): unknown {
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
