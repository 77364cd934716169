/**
 * MySQL and MariaDB for `sql` steps, through `mysql2` (loaded on first use).
 *
 * Parameters only: server-side prepared statements (`execute`) carry the values apart from the
 * statement.
 *
 * Bounded rows: a result set has no row limit in the protocol, so rows are read one at a time, and
 * at row maxRows + 1 the connection stops reading and is closed (dropped from its pool; the
 * server's thread ends as its write fails).
 *
 * Time: MySQL's `max_execution_time` and MariaDB's `max_statement_time` differ (and cover SELECT
 * only on MySQL), so a second connection sends `KILL QUERY <thread id>` when `timeoutMs` is up.
 */
import type { NetworkPolicy } from '../network.js';
import {
  Cancelled,
  CONNECT_TIMEOUT_MS,
  type DbConfig,
  guarded,
  guardedSocket,
  IDLE_MS,
  jsonValue,
  POOL_SIZE,
  type Pool,
  type SqlOutput,
} from './connection.js';

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

export async function openMysql(c: DbConfig, policy: NetworkPolicy): Promise<Pool> {
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
