/**
 * "The store cannot take the write" (SPEC 3.5): which failures of a store operation mean the
 * database itself is out of service — unreachable, out of space, read-only, damaged — rather than
 * something wrong with this one write (a constraint, a bug). Those are answered 503
 * `store_unavailable` with Retry-After, not 500, and mark the store not ready (health.ts).
 *
 * Errors are classified by their `code` only (plus two driver messages that carry none), because
 * errors of SQLite's writer thread cross postMessage as `{ message, code }` (sqlite/writer.ts):
 * a class or a prototype would not survive the trip, the code does.
 */
import { AppError } from '../errors.js';

/** Seconds a client is told to wait: long enough for a disk to be cleaned or a database restarted. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * SQLite result codes (better-sqlite3 puts the extended name in `code`: SQLITE_IOERR_WRITE…).
 * FULL/IOERR: the disk. READONLY: a read-only file or mount. CANTOPEN: the file or its WAL
 * cannot be opened (directory gone, permissions). BUSY: another process held the write lock past
 * busy_timeout (5 s). CORRUPT/NOTADB: the file is damaged: it will not recover by itself, but the
 * caller's answer is the same — not their fault, retry elsewhere or later — and the one log line
 * of the outage says why.
 */
const SQLITE_PREFIXES = [
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_READONLY',
  'SQLITE_CANTOPEN',
  'SQLITE_BUSY',
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
];

/**
 * PostgreSQL SQLSTATE classes and codes. 08: connection exceptions. 53: insufficient resources
 * (53100 disk_full, 53200 out_of_memory, 53300 too_many_connections). 58: system errors (58030
 * io_error). 57P01–57P05: the server is shutting down, crashed, is starting, the database was
 * dropped, or the session timed out. 25006: a read-only transaction (a standby, or
 * default_transaction_read_only). 28: authorisation of the connection refused. 3D000: the
 * database does not exist.
 */
const PG_CLASSES = ['08', '53', '58'];
const PG_CODES = new Set(['57P01', '57P02', '57P03', '57P04', '57P05', '25006', '28000', '28P01', '3D000']);

/** Node's socket and file-system errors: the server cannot be reached, or the disk refuses. */
const SYSTEM_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'EIO',
]);

/**
 * Failures pg reports without a code: a connection that ended under a query, a client that lost
 * its connection, the pool's connect timeout. 55000 (object_not_in_prerequisite_state) is a
 * connection refusal only with this message (`ALTER DATABASE … ALLOW_CONNECTIONS false`).
 */
const PG_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|Connection ended unexpectedly)|is not currently accepting connections/;

/**
 * Whether `err` says the store is out of service. Only the error itself is read, not its `cause`:
 * an outbound fetch's "fetch failed" carries ECONNREFUSED as its cause, and is no store failure.
 */
export function isStoreUnavailable(err: unknown): boolean {
  if (err instanceof AppError) return err.code === 'store_unavailable';
  if (!err || typeof err !== 'object') return false;
  const { code, message, errors } = err as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string' && unavailableCode(code)) return true;
  if (typeof message === 'string' && PG_MESSAGES.test(message)) return true;
  // Node's connect to a name with several addresses ("localhost": ::1 and 127.0.0.1) rejects with
  // an AggregateError of each attempt's error.
  return Array.isArray(errors) && errors.some(isStoreUnavailable);
}

function unavailableCode(code: string): boolean {
  if (code.startsWith('SQLITE_')) return SQLITE_PREFIXES.some((p) => code.startsWith(p));
  if (SYSTEM_CODES.has(code)) return true;
  // SQLSTATEs are five characters of digits and capitals.
  return code.length === 5 && (PG_CODES.has(code) || PG_CLASSES.includes(code.slice(0, 2)));
}

/** The 503 a caller gets when the store cannot take the write; `cause` is kept for the log. */
export function storeUnavailable(cause: unknown): AppError {
  if (cause instanceof AppError && cause.code === 'store_unavailable') return cause;
  return new AppError(
    'store_unavailable',
    'The server cannot store requests right now, so this one was not accepted.',
    {
      hint: 'Nothing was stored: retry after the number of seconds in Retry-After. If it lasts, the server log says why its database refuses writes (unreachable, disk full, read-only).',
      headers: { 'retry-after': String(STORE_RETRY_AFTER_SECONDS) },
      cause,
    },
  );
}
