/**
 * The `sql` step and the `postgres` / `mysql` credentials (SPEC 7e) over HTTP, against the
 * PostgreSQL (127.0.0.1:5432) and MariaDB (127.0.0.1:3306) this machine runs, a database of their
 * own per run: values go in only as parameters (an injection attempt is stored as plain data),
 * `maxRows` bounds what is read (`truncated`), `timeoutMs` cancels the statement on the server
 * (gone from pg_stat_activity / the process list when the step fails), an expression in `query`
 * is refused at save, a changed credential closes its pool (its connections gone on the server),
 * errors carry the server's message and code, the password is in no answer, record or export,
 * and the private-network policy holds.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishedExecution } from '../engine/int-helpers.js';
import { PG_ADMIN_URL } from '../helpers/postgres.js';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';

const PASSWORD = 'pw-SECRET-sql-5e71a9';

/** One database server: a database of its own, a way to look at it, and its credential's data. */
interface Db {
  name: string;
  data: Record<string, unknown>;
  /** Runs SQL as the administrator, in this database (rows). */
  admin(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** Statements of the step's connections still running on the server whose text has `text`. */
  running(text: string): Promise<number>;
  /** The step's connections open on the server. */
  connections(): Promise<number>;
  /** DDL for the `orders` table. */
  ordersTable: string;
  upsert: string;
  selectById: string;
  selectByCustomer: string;
  manyRows: string;
  sleep: string;
  drop(): Promise<void>;
}

async function postgresDb(): Promise<Db> {
  const name = `hookflow_sql_${randomBytes(5).toString('hex')}`;
  const root = new pg.Client({ connectionString: PG_ADMIN_URL });
  await root.connect();
  await root.query(`create database ${name}`);
  await root.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  const q = async (sql: string, params: unknown[] = []) => (await admin.query(sql, params)).rows;
  return {
    name,
    // Trust authentication: the password is sent, and not needed (it is there to be looked for).
    data: {
      host: '127.0.0.1',
      port: 5432,
      database: name,
      username: 'postgres',
      password: PASSWORD,
      ssl: false,
    },
    admin: q,
    running: async (text) =>
      Number(
        (
          await q(
            `select count(*)::int as n from pg_stat_activity
              where datname = $1 and application_name = 'hookflow' and state = 'active' and query like $2`,
            [name, `%${text}%`],
          )
        )[0]!.n,
      ),
    connections: async () =>
      Number(
        (
          await q(
            `select count(*)::int as n from pg_stat_activity where datname = $1 and application_name = 'hookflow'`,
            [name],
          )
        )[0]!.n,
      ),
    ordersTable: `create table orders (
      id integer primary key, customer text not null, total numeric(10,2), big bigint,
      huge bigint, paid boolean, meta jsonb, photo bytea, placed timestamptz, due date, seen timestamp)`,
    upsert: `insert into orders (id, customer, total, big, huge, paid, meta, photo, placed, due, seen)
      values ($1, $2, $3, $4, $5, $6, $7, decode($8, 'base64'), $9, $10, $11)
      on conflict (id) do update set customer = excluded.customer, total = excluded.total`,
    selectById: 'select * from orders where id = $1',
    selectByCustomer: 'select id, customer from orders where customer = $1',
    manyRows: 'select n from generate_series(1, 50) as n',
    sleep: 'select pg_sleep(30)',
    async drop() {
      await admin.end();
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

async function mariaDb(): Promise<Db> {
  const name = `hookflow_sql_${randomBytes(5).toString('hex')}`;
  const user = `hf_${randomBytes(4).toString('hex')}`;
  const root = await mysql.createConnection({ host: '127.0.0.1', port: 3306, user: 'root', password: '' });
  await root.query(`create database ${name}`);
  // A user of its own with a password (root has none here), so the step's connections can be told apart.
  for (const host of ['127.0.0.1', 'localhost', '%']) {
    await root.query(`create user '${user}'@'${host}' identified by '${PASSWORD}'`);
    await root.query(`grant all on ${name}.* to '${user}'@'${host}'`);
  }
  await root.query(`use ${name}`);
  const q = async (sql: string, params: unknown[] = []) =>
    (await root.query(sql, params))[0] as Record<string, unknown>[];
  return {
    name,
    data: { host: '127.0.0.1', port: 3306, database: name, username: user, password: PASSWORD },
    admin: q,
    running: async (text) =>
      Number(
        (
          await q(
            `select count(*) as n from information_schema.processlist
              where user = ? and command <> 'Sleep' and info like ?`,
            [user, `%${text}%`],
          )
        )[0]!.n,
      ),
    connections: async () =>
      Number(
        (await q('select count(*) as n from information_schema.processlist where user = ?', [user]))[0]!.n,
      ),
    ordersTable: `create table orders (
      id int primary key, customer varchar(200) not null, total decimal(10,2), big bigint,
      huge bigint, paid boolean, meta json, photo blob, placed timestamp(3) null, due date, seen datetime)`,
    upsert: `insert into orders (id, customer, total, big, huge, paid, meta, photo, placed, due, seen)
      values (?, ?, ?, ?, ?, ?, ?, from_base64(?), ?, ?, ?)
      on duplicate key update customer = values(customer), total = values(total)`,
    selectById: 'select * from orders where id = ?',
    selectByCustomer: 'select id, customer from orders where customer = ?',
    manyRows: 'select seq as n from seq_1_to_50',
    sleep: 'select sleep(30)',
    async drop() {
      await root.query(`drop database if exists ${name}`);
      for (const host of ['127.0.0.1', 'localhost', '%'])
        await root.query(`drop user if exists '${user}'@'${host}'`);
      await root.end();
    },
  };
}

const webhook = async (server: TestServer, path: string, body: unknown) => {
  const res = await fetch(`${server.url}/webhook/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const { executionId } = (await res.json()) as { executionId: string };
  return finishedExecution(server, executionId, 20_000);
};

const stepOf = (execution: { steps: { name: string }[] }, name: string) =>
  // biome-ignore lint/suspicious/noExplicitAny: JSON from the API
  execution.steps.find((s) => s.name === name) as any;

describe.each([
  { dialect: 'postgres', type: 'postgres', make: postgresDb },
  { dialect: 'mariadb', type: 'mysql', make: mariaDb },
])('sql step on $dialect', ({ dialect, type, make }) => {
  let server: TestServer;
  let db: Db;
  let credentialId: string;

  beforeAll(async () => {
    db = await make();
    await db.admin(db.ordersTable);
    server = await startTestServer({ env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  let n = 0;
  /** An active webhook → sql workflow; runs it with `body` and answers the finished execution. */
  const runSql = async (step: Record<string, unknown>, body: unknown = {}) => {
    const path = `sql-${dialect}-${++n}`;
    await createActiveWorkflow(server, {
      name: path,
      trigger: { path },
      steps: [{ name: 'query', type: 'sql', credential: credentialId, ...step }],
    });
    return webhook(server, path, body);
  };

  it('creates the credential with its data write-only, and checks its fields', async () => {
    const res = await server.api('POST', '/api/v1/credentials', {
      name: `${dialect} orders`,
      type,
      data: db.data,
    });
    expect(res.status).toBe(201);
    credentialId = res.body.id;
    expect(res.body.type).toBe(type);
    expect(res.body.data).toEqual(Object.fromEntries(Object.keys(db.data).map((k) => [k, '***'])));
    const got = await server.api('GET', `/api/v1/credentials/${credentialId}`);
    expect(JSON.stringify(got.body)).not.toContain(PASSWORD);

    const bad = await server.api('POST', '/api/v1/credentials', {
      name: 'bad',
      type,
      data: { port: 99999, database: 'x', username: 'u', extra: 1 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
    // Each wrong field named once.
    const fields = (bad.body.fields as { field: string }[]).map((f) => f.field).sort();
    expect(fields).toEqual(['/data/extra', '/data/host', '/data/port']);
  });

  it('inserts and selects with parameters; values come back JSON-friendly', async () => {
    const order = {
      id: 1,
      customer: 'Ada',
      total: '19.90',
      big: 1234567890123,
      huge: '9007199254740993',
      paid: true,
      meta: { tags: ['a', 'b'] },
      photo: Buffer.from([0, 1, 2, 250]).toString('base64'),
      placed: '2026-05-04T03:02:01.123Z',
      due: '2026-06-01',
      seen: '2026-05-04 10:11:12',
    };
    const path = `upsert-${dialect}`;
    await createActiveWorkflow(server, {
      name: path,
      trigger: { path },
      steps: [
        {
          name: 'upsert',
          type: 'sql',
          credential: credentialId,
          query: db.upsert,
          params: [
            '{{ body.id }}',
            '{{ body.customer }}',
            '{{ body.total }}',
            '{{ body.big }}',
            '{{ body.huge }}',
            '{{ body.paid }}',
            '{{ $string(body.meta) }}',
            '{{ body.photo }}',
            // MySQL's TIMESTAMP takes no zone designator; the session is UTC.
            dialect === 'postgres' ? '{{ body.placed }}' : '2026-05-04 03:02:01.123',
            '{{ body.due }}',
            '{{ body.seen }}',
          ],
        },
        {
          name: 'read',
          type: 'sql',
          credential: credentialId,
          query: db.selectById,
          params: ['{{ $trigger.body.id }}'],
        },
      ],
    });
    const execution = await webhook(server, path, order);
    expect(execution.status, JSON.stringify(execution.error)).toBe('succeeded');
    expect(stepOf(execution, 'upsert').output).toEqual({ rows: [], rowCount: 1, truncated: false });
    const read = stepOf(execution, 'read').output;
    expect(read.rowCount).toBe(1);
    expect(read.truncated).toBe(false);
    const row = read.rows[0];
    expect(row).toMatchObject({
      id: 1,
      customer: 'Ada',
      // Exact decimals as text; bigints as numbers while safe, text beyond.
      total: '19.90',
      big: 1234567890123,
      huge: '9007199254740993',
      photo: order.photo,
      due: '2026-06-01',
      seen: '2026-05-04T10:11:12',
      placed: dialect === 'postgres' ? '2026-05-04T03:02:01.123Z' : '2026-05-04T03:02:01.123Z',
    });
    expect(row.paid === true || row.paid === 1).toBe(true);
    expect(typeof row.meta === 'string' ? JSON.parse(row.meta) : row.meta).toEqual(order.meta);

    // The same upsert again updates the row.
    const again = await webhook(server, path, { ...order, customer: 'Ada L.' });
    expect(again.status).toBe('succeeded');
    expect(stepOf(again, 'read').output.rows[0].customer).toBe('Ada L.');
  });

  it('stores an injection attempt through a parameter as plain data', async () => {
    const evil = dialect === 'postgres' ? "x'); drop table orders; --" : "x'); drop table orders; -- ";
    const insert = await runSql(
      {
        query: db.upsert,
        params: [
          '{{ body.id }}',
          '{{ body.customer }}',
          null,
          null,
          null,
          null,
          null,
          null,
          null,
          null,
          null,
        ],
      },
      { id: 2, customer: evil },
    );
    expect(insert.status, JSON.stringify(insert.error)).toBe('succeeded');
    const stored = await db.admin(db.selectById.replace(/\$1|\?/, '2'));
    expect(stored[0]!.customer).toBe(evil);
    // The table is still there, and a classic tautology matches nothing.
    const tautology = await runSql(
      { query: db.selectByCustomer, params: ['{{ body.q }}'] },
      { q: "' OR '1'='1" },
    );
    expect(tautology.status).toBe('succeeded');
    expect(stepOf(tautology, 'query').output).toEqual({ rows: [], rowCount: 0, truncated: false });
    expect((await db.admin('select count(*) as n from orders'))[0]!.n).toBeTruthy();
  });

  it('reads at most maxRows rows and says it truncated', async () => {
    const few = await runSql({ query: db.manyRows, maxRows: 10 });
    expect(few.status, JSON.stringify(few.error)).toBe('succeeded');
    const out = stepOf(few, 'query').output;
    expect(out.truncated).toBe(true);
    expect(out.rows.map((r: { n: number }) => Number(r.n))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const all = await runSql({ query: db.manyRows, maxRows: 50 });
    expect(stepOf(all, 'query').output).toMatchObject({ rowCount: 50, truncated: false });
    expect(stepOf(all, 'query').output.rows).toHaveLength(50);
  });

  it('cancels a statement past timeoutMs on the server', async () => {
    const execution = await runSql({ query: db.sleep, timeoutMs: 500 });
    expect(execution.status).toBe('failed');
    expect(execution.error.message).toMatch(/did not finish within 500 ms \(timeoutMs\) and was cancelled/);
    // Gone on the server when the step has failed (not left sleeping for 30 s).
    expect(await db.running(db.sleep)).toBe(0);
    // The pool still works afterwards.
    const next = await runSql({ query: 'select 1 as one' });
    expect(stepOf(next, 'query').output.rows).toEqual([{ one: 1 }]);
  });

  it('refuses an expression in query at save, naming the field', async () => {
    const res = await server.api('POST', '/api/v1/workflows', {
      name: 'spliced',
      steps: [
        { name: 'ok', type: 'set', fields: { a: 1 } },
        {
          name: 'bad',
          type: 'sql',
          credential: credentialId,
          query: "select * from orders where customer = '{{ body.c }}'",
        },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.fields.map((f: { field: string }) => f.field)).toEqual(['/steps/1/query']);
    // A credential of another type is refused too.
    const bearer = await server.api('POST', '/api/v1/credentials', {
      name: 'b',
      type: 'bearer',
      data: { token: 'tttt' },
    });
    const wrong = await server.api('POST', '/api/v1/workflows', {
      name: 'wrong',
      steps: [{ name: 'q', type: 'sql', credential: bearer.body.id, query: 'select 1' }],
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.fields.map((f: { field: string }) => f.field)).toEqual(['/steps/0/credential']);
  });

  it('fails with the server message and code, no stack', async () => {
    const missing = await runSql({ query: 'select * from no_such_table' });
    expect(missing.status).toBe('failed');
    const { message } = missing.error;
    if (dialect === 'postgres') {
      expect(message).toBe('PostgreSQL: relation "no_such_table" does not exist (SQLSTATE 42P01)');
      expect(stepOf(missing, 'query').output.error).toMatchObject({ code: '42P01', position: 15 });
    } else {
      expect(message).toBe(
        `MySQL: Table '${db.name}.no_such_table' doesn't exist (ER_NO_SUCH_TABLE 1146, SQLSTATE 42S02)`,
      );
      expect(stepOf(missing, 'query').output.error).toMatchObject({ code: 'ER_NO_SUCH_TABLE', errno: 1146 });
    }
    expect(JSON.stringify(missing)).not.toMatch(/\n\s+at /);
    const dup = await runSql(
      {
        query: db.upsert.replace(/on (conflict|duplicate)[\s\S]*$/, ''),
        params: [1, 'dup', null, null, null, null, null, null, null, null, null],
      },
      {},
    );
    expect(dup.status).toBe('failed');
    expect(dup.error.message).toMatch(dialect === 'postgres' ? /SQLSTATE 23505/ : /ER_DUP_ENTRY 1062/);
  });

  it('closes the pool of a changed credential: its connections are gone on the server', async () => {
    const first = await runSql({ query: 'select 1 as one' });
    expect(first.status).toBe('succeeded');
    expect(await db.connections()).toBeGreaterThan(0);
    const patch = await server.api('PATCH', `/api/v1/credentials/${credentialId}`, {
      data: { port: db.data.port },
    });
    expect(patch.status).toBe(200);
    // Closing is asynchronous on the server's side (it ends a backend once the client has left).
    await eventually(async () => (await db.connections()) === 0, 5_000);
    const after = await runSql({ query: 'select 2 as two' });
    expect(stepOf(after, 'query').output.rows).toEqual([{ two: 2 }]);
  });

  it('closes the pool of a deleted credential', async () => {
    // The first credential's pool closed first (a PATCH), so what is left open is the new one's.
    await server.api('PATCH', `/api/v1/credentials/${credentialId}`, { data: { port: db.data.port } });
    await eventually(async () => (await db.connections()) === 0, 5_000);
    const other = await server.api('POST', '/api/v1/credentials', {
      name: 'short-lived',
      type,
      data: db.data,
    });
    const path = `deleted-${dialect}`;
    const wf = await createActiveWorkflow(server, {
      name: path,
      trigger: { path },
      steps: [{ name: 'q', type: 'sql', credential: other.body.id, query: 'select 1 as one' }],
    });
    expect((await webhook(server, path, {})).status).toBe('succeeded');
    expect(await db.connections()).toBeGreaterThan(0);
    expect((await server.api('DELETE', `/api/v1/workflows/${wf.id}`)).status).toBe(204);
    expect((await server.api('DELETE', `/api/v1/credentials/${other.body.id}`)).status).toBe(204);
    await eventually(async () => (await db.connections()) === 0, 5_000);
  });

  it('keeps the password out of answers, records and exports', async () => {
    const list = await server.api('GET', '/api/v1/executions?limit=100');
    const executions = await Promise.all(
      list.body.items.map((e: { id: string }) => server.api('GET', `/api/v1/executions/${e.id}`)),
    );
    const exported = await server.api('GET', '/api/v1/workflows?limit=100');
    const creds = await server.api('GET', '/api/v1/credentials');
    for (const what of [executions.map((e) => e.body), exported.body, creds.body])
      expect(JSON.stringify(what)).not.toContain(PASSWORD);
  });
});

describe('sql step when the execution runs out of time', () => {
  let db: Db;
  let server: TestServer;
  beforeAll(async () => {
    db = await postgresDb();
    server = await startTestServer({
      env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true', HOOKFLOW_EXECUTION_TIMEOUT_MS: '1000' },
    });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('cancels the statement on the server (a cancel request), and closes the pools at shutdown', async () => {
    const cred = await server.api('POST', '/api/v1/credentials', {
      name: 'pg',
      type: 'postgres',
      data: db.data,
    });
    await createActiveWorkflow(server, {
      name: 'budget',
      trigger: { path: 'budget' },
      // The step's own timeout is far away: the execution's budget (1 s) ends it.
      steps: [
        { name: 'q', type: 'sql', credential: cred.body.id, query: 'select pg_sleep(30)', timeoutMs: 60_000 },
      ],
    });
    const execution = await webhook(server, 'budget', {});
    expect(execution.status).toBe('failed');
    expect(JSON.stringify(execution.error)).toMatch(/ran out of time|execution_timeout|budget/);
    await eventually(async () => (await db.running('pg_sleep(30)')) === 0, 5_000);
    expect(await db.connections()).toBeGreaterThanOrEqual(0);
    await server.close();
    await eventually(async () => (await db.connections()) === 0, 5_000);
  });
});

describe('sql step network policy', () => {
  let db: Db;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    db = await postgresDb();
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    await db?.drop();
  });

  const tryWith = async (env: Record<string, string>) => {
    const server = await startTestServer({ env });
    servers.push(server);
    const cred = await server.api('POST', '/api/v1/credentials', {
      name: 'pg',
      type: 'postgres',
      data: db.data,
    });
    await createActiveWorkflow(server, {
      name: 'policy',
      trigger: { path: 'policy' },
      steps: [{ name: 'q', type: 'sql', credential: cred.body.id, query: 'select 1 as one' }],
    });
    return webhook(server, 'policy', {});
  };

  it('refuses a private address unless HOOKFLOW_SQL_PRIVATE_NETWORKS lists it', async () => {
    const refused = await tryWith({});
    expect(refused.status).toBe('failed');
    expect(refused.error.message).toMatch(/Refused to connect to 127\.0\.0\.1: it is a loopback address/);
    expect(refused.error.message).toMatch(/HOOKFLOW_SQL_PRIVATE_NETWORKS/);
    const allowed = await tryWith({ HOOKFLOW_SQL_PRIVATE_NETWORKS: '127.0.0.0/8' });
    expect(allowed.status, JSON.stringify(allowed.error)).toBe('succeeded');
  });
});
