/**
 * `sql`: one statement against a PostgreSQL or MySQL/MariaDB database named by a `postgres` or
 * `mysql` credential (SPEC 7e). Output `{rows, rowCount, truncated}`: `rowCount` is the number of
 * rows the statement affected (INSERT/UPDATE/DELETE) or returned (at most maxRows).
 *
 * Parameters only. `query` is literal text, never a template: `{{` in it is refused when the
 * workflow is saved, so data reaches the database only as bound parameters (`params`, `$1`… for
 * PostgreSQL, `?` for MySQL), sent apart from the statement (PostgreSQL's extended protocol;
 * MySQL's server-side prepared statements), never spliced into its text. One statement per step:
 * neither protocol takes several in one prepared statement.
 *
 * `maxRows` (default 1 000) and `timeoutMs` (default 10 000): how engine/sql/ bounds the rows
 * it reads and cancels the statement on the server; its pools, network policy and values too.
 *
 * Errors fail the step with the server's message and code (SQLSTATE; MySQL's error name and
 * number), never a stack; the failed step's output holds them as `{error: {code, message, …}}`.
 */
import Type from 'typebox';
import type { FieldError } from '../../errors.js';
import { Cancelled, type SqlQuery } from '../sql/pools.js';
import { defineStep, Expr, StepFailure } from './types.js';

export const DEFAULT_MAX_ROWS = 1_000;
export const MAX_MAX_ROWS = 100_000;
export const DEFAULT_SQL_TIMEOUT_MS = 10_000;

export const sqlStep = defineStep({
  type: 'sql',
  description:
    'Run one SQL statement on PostgreSQL or MySQL, data passed as parameters; its rows are the output.',
  config: Type.Object(
    {
      credential: Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[0-9A-Za-z_-]+$',
        description: 'The id of a postgres or mysql credential (POST /api/v1/credentials).',
      }),
      query: Type.String({
        minLength: 1,
        maxLength: 100_000,
        description:
          'One SQL statement, literal text: data goes in `params` ($1, $2… for PostgreSQL, ? for MySQL), never into the text.',
      }),
      params: Type.Optional(Expr(Type.Array(Type.Unknown(), { maxItems: 10_000 }))),
      maxRows: Type.Optional(Expr(Type.Integer({ minimum: 1, maximum: MAX_MAX_ROWS }))),
      timeoutMs: Type.Optional(Expr(Type.Integer({ minimum: 1, maximum: 300_000 }))),
    },
    { additionalProperties: false },
  ),
  literal: ['query'],
  credentialTypes: ['postgres', 'mysql'],
  // SPEC 7e: a secret may reach the database as a parameter (and is scrubbed from the record).
  secretFields: ['/params'],
  check(config) {
    const errors: FieldError[] = [];
    if (typeof config.query === 'string' && config.query.includes('{{'))
      errors.push({
        field: '/query',
        message:
          'is literal SQL and may not hold an expression: put each value in params and refer to it as $1, $2… (PostgreSQL) or ? (MySQL)',
      });
    return errors;
  },
  async run(config, ctx) {
    const cred = ctx.credentials?.[config.credential];
    if (!cred)
      throw new StepFailure(
        `Credential "${config.credential}" does not exist (any more): this version names a credential that was deleted.`,
        { field: '/credential' },
      );
    if (cred.type !== 'postgres' && cred.type !== 'mysql')
      throw new StepFailure(
        `Credential "${config.credential}" is a ${cred.type} credential, not postgres or mysql.`,
        {
          field: '/credential',
        },
      );
    if (!ctx.sql) throw new StepFailure('This engine runs no sql steps.');
    const query: SqlQuery = {
      text: config.query,
      params: (config.params ?? []).map((p) => (p === undefined ? null : p)),
      maxRows: config.maxRows ?? DEFAULT_MAX_ROWS,
      timeoutMs: config.timeoutMs ?? DEFAULT_SQL_TIMEOUT_MS,
      signal: ctx.signal,
    };
    const password = String(cred.data.password ?? '');
    try {
      return { output: await ctx.sql.query(config.credential, cred, query) };
    } catch (err) {
      throw failure(err, query, password);
    }
  },
});

function failure(err: unknown, query: SqlQuery, password: string): StepFailure {
  if (err instanceof StepFailure) return err;
  const hide = (s: string) => (password.length >= 4 ? s.split(password).join('***') : s);
  if (err instanceof Cancelled)
    return err.why === 'timeout'
      ? new StepFailure(
          `The statement did not finish within ${query.timeoutMs} ms (timeoutMs) and was cancelled on the server.`,
          {
            field: '/timeoutMs',
            output: { error: { code: 'timeout', message: 'cancelled after timeoutMs' } },
          },
        )
      : new StepFailure('The statement was cancelled on the server: the execution ran out of time.');
  const e = (err ?? {}) as {
    message?: string;
    name?: string;
    code?: string;
    errno?: number;
    sqlState?: string;
    sqlMessage?: string;
    detail?: string;
    hint?: string;
    position?: string;
    severity?: string;
  };
  if (e.name === 'NetworkRefused')
    return new StepFailure(
      hide(String(e.message)).replace(
        /Outbound requests reach.*$/,
        'Database steps reach public addresses only, unless the address is in HOOKFLOW_SQL_PRIVATE_NETWORKS (CIDR ranges) or HOOKFLOW_ALLOW_PRIVATE_NETWORK=true.',
      ),
      { field: '/credential' },
    );
  const message = hide(e.sqlMessage ?? e.message ?? String(err));
  // PostgreSQL: a DatabaseError (severity, SQLSTATE code). MySQL: code (ER_…), errno, sqlState.
  if (typeof e.severity === 'string') {
    const error = {
      code: e.code,
      message,
      ...(e.detail ? { detail: hide(e.detail) } : {}),
      ...(e.hint ? { hint: e.hint } : {}),
      ...(e.position ? { position: Number(e.position) } : {}),
    };
    const more = [e.detail ? hide(e.detail) : '', e.hint ? `Hint: ${e.hint}` : ''].filter(Boolean).join(' ');
    return new StepFailure(`PostgreSQL: ${message} (SQLSTATE ${e.code})${more ? `. ${more}` : ''}`, {
      output: { error },
    });
  }
  if (typeof e.errno === 'number' && e.sqlState) {
    const error = { code: e.code, errno: e.errno, sqlState: e.sqlState, message };
    return new StepFailure(`MySQL: ${message} (${e.code} ${e.errno}, SQLSTATE ${e.sqlState})`, {
      output: { error },
    });
  }
  // Connecting failed, or the connection broke: the system's code (ECONNREFUSED…) when there is one.
  const code = e.code ?? (e.errno !== undefined ? String(e.errno) : undefined);
  return new StepFailure(
    `The database could not be reached: ${message}${code && !message.includes(code) ? ` (${code})` : ''}`,
    {
      output: { error: { ...(code ? { code } : {}), message } },
    },
  );
}
