/**
 * Which store failures are "the store cannot take the write" (SPEC 3.5: 503 store_unavailable)
 * and which stay what they are (a constraint is the write's own problem; a bug is a 500).
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { isStoreUnavailable, storeUnavailable } from '../../src/store/unavailable.js';

const coded = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('isStoreUnavailable', () => {
  it.each([
    ['SQLite: disk full', coded('SQLITE_FULL', 'database or disk is full')],
    ['SQLite: I/O error (extended code)', coded('SQLITE_IOERR_WRITE')],
    ['SQLite: read-only mount', coded('SQLITE_READONLY_DIRECTORY')],
    ['SQLite: cannot open', coded('SQLITE_CANTOPEN')],
    ['SQLite: locked past busy_timeout', coded('SQLITE_BUSY')],
    ['SQLite: damaged file', coded('SQLITE_CORRUPT')],
    ['PostgreSQL: disk full', coded('53100')],
    ['PostgreSQL: too many connections', coded('53300')],
    ['PostgreSQL: admin shutdown (pg_terminate_backend)', coded('57P01')],
    ['PostgreSQL: starting up', coded('57P03')],
    ['PostgreSQL: connection failure', coded('08006')],
    ['PostgreSQL: read-only transaction (a standby)', coded('25006')],
    ['PostgreSQL: database does not exist', coded('3D000')],
    [
      'PostgreSQL: refusing connections',
      coded('55000', 'database "x" is not currently accepting connections'),
    ],
    ['a refused connection', coded('ECONNREFUSED')],
    ['a reset connection', coded('ECONNRESET')],
    ['no space for a file', coded('ENOSPC')],
    ['pg: connection ended under a query', new Error('Connection terminated unexpectedly')],
    ['pg: pool connect timeout', new Error('timeout exceeded when trying to connect')],
    ['Node: every address refused', new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')])],
    // What the SQLite writer thread's reply becomes on the event loop (sqlite/writer.ts): only
    // message and code cross postMessage.
    ['SQLite writer thread reply', coded(structuredClone({ code: 'SQLITE_FULL' }).code)],
    ['our own 503', storeUnavailable(coded('SQLITE_FULL'))],
  ])('%s: unavailable', (_name, err) => {
    expect(isStoreUnavailable(err)).toBe(true);
  });

  it.each([
    ['SQLite: unique violation', coded('SQLITE_CONSTRAINT_UNIQUE')],
    ['SQLite: syntax error (a bug)', coded('SQLITE_ERROR')],
    ['PostgreSQL: unique violation', coded('23505')],
    ['PostgreSQL: deadlock', coded('40P01')],
    ['PostgreSQL: other 55000', coded('55000', 'lock is not available')],
    [
      'an outbound fetch that was refused (the cause is not read)',
      new TypeError('fetch failed', { cause: coded('ECONNREFUSED') }),
    ],
    ['another AppError', new AppError('overloaded', 'busy')],
    ['a string', 'SQLITE_FULL'],
    ['nothing', undefined],
  ])('%s: not unavailable', (_name, err) => {
    expect(isStoreUnavailable(err)).toBe(false);
  });
});

describe('storeUnavailable', () => {
  it('is a 503 with Retry-After, a message and a hint, keeping the cause for the log', () => {
    const cause = coded('SQLITE_FULL');
    const err = storeUnavailable(cause);
    expect(err.status).toBe(503);
    expect(err.headers).toEqual({ 'retry-after': '5' });
    expect(err.cause).toBe(cause);
    expect(JSON.parse(JSON.stringify(err))).toEqual({
      code: 'store_unavailable',
      message: expect.stringMatching(/not accepted/),
      hint: expect.stringMatching(/Retry-After/),
    });
    expect(storeUnavailable(err)).toBe(err);
  });
});
