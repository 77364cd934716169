/**
 * Executions search at scale (issue 19): a store of ROWS executions (default a million) of one
 * workflow that declares `body.order_id` and `body.region` searchable, with their searchable
 * fields, and the time `GET /executions?where=` takes through hookflow's own service — indexed (a
 * declared field) and windowed (an undeclared one), for a hit and for no match — on SQLite and on
 * PostgreSQL. Needs `npm run build` (it runs dist/).
 *
 *   node bench/search.js [--rows 1000000] [--sqlite] [--postgres [URL]] [--repeat 5]
 *
 * Neither flag: both dialects; PostgreSQL at postgres://postgres@127.0.0.1:5432 (a database
 * `hookflow_bench_search` is created and dropped). Rows are loaded in bulk (prepared inserts in
 * transactions of 20 000 on SQLite; generate_series on PostgreSQL), not through webhooks: this
 * measures the reads. The figures are medians of `--repeat` runs of each search, after one warm-up.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../dist/config.js';
import { ExecutionService } from '../dist/executions/service.js';
import { createLogger } from '../dist/log.js';
import { openStore } from '../dist/store/open.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    sqlite: { type: 'boolean', default: false },
    postgres: { type: 'string' },
    repeat: { type: 'string', default: '5' },
  },
  allowNegative: false,
  strict: true,
});
// `--postgres` alone takes the default URL.
const argv = process.argv.slice(2);
const pgFlag = argv.includes('--postgres');
const ROWS = Number(values.rows);
const REPEAT = Number(values.repeat);
const PG_URL = values.postgres || 'postgres://postgres@127.0.0.1:5432/postgres';
const both = !values.sqlite && !pgFlag;

const WORKFLOW = '00000000-0000-7000-8000-00000000000a';
const REGIONS = ['eu', 'us', 'apac', 'latam'];
const log = createLogger('silent', 2);

/** The i-th execution's id: time-ordered like hookflow's UUIDv7s (i = 0 is the oldest). */
const idOf = (i) => `01900000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`;
const orderOf = (i) => `o-${i}`;
const customerOf = (i) => `c-${i % 50_000}`;
const triggerOf = (i) =>
  JSON.stringify({
    headers: {
      'content-type': 'application/json',
      'user-agent': 'shop/1.0',
      'x-shop-topic': 'orders/create',
    },
    params: {},
    query: {},
    body: { order_id: orderOf(i), customer: customerOf(i), region: REGIONS[i % 4], amount: (i % 997) + 0.5 },
    files: [],
    executionMode: 'production',
    receivedAt: '2026-11-24T00:00:00.000Z',
  });

const workflowRow = () => ({
  id: WORKFLOW,
  name: 'orders',
  active: 0,
  version: 1,
  published_version: null,
  trigger: JSON.stringify({
    type: 'webhook',
    methods: ['POST'],
    path: 'orders',
    auth: { type: 'none' },
    response: { mode: 'immediately' },
    options: {},
  }),
  steps: '[]',
  settings: JSON.stringify({ searchFields: ['body.order_id', 'body.region'] }),
  created_at: '2026-11-24T00:00:00.000Z',
  updated_at: '2026-11-24T00:00:00.000Z',
});

async function loadSqlite(dataDir) {
  const file = path.join(dataDir, 'hookflow.sqlite');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const insert =
    db.prepare(`insert into executions (id, workflow_id, workflow_version, mode, status, trigger, steps,
      error, attempt, retry_of, run_after, locked_until, locked_by, created_at, started_at, finished_at, warnings)
    values (?, ?, 1, 'production', 'succeeded', ?, '[]', null, 1, null, ?, null, null, ?, ?, ?, null)`);
  const field = db.prepare(
    'insert into execution_fields (workflow_id, path, value, execution_id) values (?, ?, ?, ?)',
  );
  const at = '2026-11-24T00:00:00.000Z';
  const batch = db.transaction((from, to) => {
    for (let i = from; i < to; i++) {
      const id = idOf(i);
      insert.run(id, WORKFLOW, triggerOf(i), at, at, at, at);
      field.run(WORKFLOW, 'body.order_id', orderOf(i), id);
      field.run(WORKFLOW, 'body.region', REGIONS[i % 4], id);
    }
  });
  for (let i = 0; i < ROWS; i += 20_000) batch(i, Math.min(ROWS, i + 20_000));
  const w = workflowRow();
  db.prepare(
    'insert into workflows (id, name, active, version, published_version, trigger, steps, settings, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(Object.values(w));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

async function loadPostgres(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const t = (i) =>
    `json_build_object('headers', json_build_object('content-type', 'application/json', 'user-agent', 'shop/1.0', 'x-shop-topic', 'orders/create'), 'params', '{}'::json, 'query', '{}'::json, 'body', json_build_object('order_id', 'o-' || ${i}, 'customer', 'c-' || (${i} % 50000), 'region', (array['eu','us','apac','latam'])[${i} % 4 + 1], 'amount', (${i} % 997) + 0.5), 'files', '[]'::json, 'executionMode', 'production', 'receivedAt', '2026-11-24T00:00:00.000Z')::text`;
  const id = (i) => `'01900000-0000-7000-8000-' || lpad(to_hex(${i}), 12, '0')`;
  const at = `'2026-11-24T00:00:00.000Z'`;
  for (let from = 0; from < ROWS; from += 200_000) {
    const to = Math.min(ROWS, from + 200_000) - 1;
    await client.query(`insert into executions (id, workflow_id, workflow_version, mode, status, trigger, steps, attempt,
        run_after, created_at, started_at, finished_at)
      select ${id('g')}, '${WORKFLOW}', 1, 'production', 'succeeded', ${t('g')}, '[]', 1, ${at}, ${at}, ${at}, ${at}
      from generate_series(${from}, ${to}) g`);
    await client.query(`insert into execution_fields (workflow_id, path, value, execution_id)
      select '${WORKFLOW}', 'body.order_id', 'o-' || g, ${id('g')} from generate_series(${from}, ${to}) g
      union all
      select '${WORKFLOW}', 'body.region', (array['eu','us','apac','latam'])[g % 4 + 1], ${id('g')} from generate_series(${from}, ${to}) g`);
  }
  const w = workflowRow();
  await client.query(
    'insert into workflows (id, name, active, version, published_version, trigger, steps, settings, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
    Object.values(w),
  );
  await client.query('vacuum analyze executions');
  await client.query('vacuum analyze execution_fields');
  await client.end();
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timeIt(fn) {
  await fn();
  const times = [];
  let result;
  for (let i = 0; i < REPEAT; i++) {
    const t0 = performance.now();
    result = await fn();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), result };
}

async function measure(dialect, env, load) {
  const config = loadConfig({ env });
  // Migrated (empty) first, then filled in bulk, then opened again to search.
  const empty = await openStore(config.store, log);
  await empty.close();
  const t0 = performance.now();
  await load();
  const loadS = (performance.now() - t0) / 1000;
  const store = await openStore(config.store, log);
  const service = new ExecutionService({ store, bus: { publish: async () => undefined } });
  const list = (where, extra = {}) =>
    service.list({ workflowId: WORKFLOW, limit: 50, ...extra }, (r) => r.id, where);
  const recent = ROWS - 10;
  const old = 10;
  const cases = [
    ['indexed, hit (a recent order)', () => list(`body.order_id=${orderOf(recent)}`)],
    ['indexed, hit (one of the oldest)', () => list(`body.order_id=${orderOf(old)}`)],
    [`indexed, 50 of ${ROWS / 4} (region=eu)`, () => list('body.region=eu')],
    [`indexed, 50 of ${ROWS / 4}, status filter`, () => list('body.region=eu', { status: 'succeeded' })],
    ['indexed, no match', () => list('body.order_id=nope')],
    [
      'indexed, no workflow filter',
      () => list(`body.order_id=${orderOf(recent)}`, { workflowId: undefined }),
    ],
    ['windowed, hit in the first window', () => list(`body.customer=${customerOf(recent)}`)],
    ['windowed, one request (no match)', () => list('body.customer=nope')],
  ];
  const out = [];
  for (const [name, fn] of cases) {
    const { ms, result } = await timeIt(fn);
    out.push({
      dialect,
      search: name,
      ms: Math.round(ms * 10) / 10,
      items: result.items.length,
      indexed: result.search.indexed,
    });
  }
  // A windowed search with no match walks every window to the end.
  const t1 = performance.now();
  let requests = 0;
  let cursor;
  do {
    const page = await service.list(
      { workflowId: WORKFLOW, limit: 50, before: cursor },
      (r) => r.id,
      'body.customer=nope',
    );
    requests++;
    cursor = page.nextCursor ? Buffer.from(page.nextCursor, 'base64url').toString() : undefined;
  } while (cursor && requests < 1000);
  out.push({
    dialect,
    search: `windowed, no match to the end (${requests} requests)`,
    ms: Math.round(performance.now() - t1),
    items: 0,
    indexed: false,
  });
  await store.close();
  console.log(`${dialect}: ${ROWS} executions loaded in ${loadS.toFixed(1)} s`);
  console.table(out);
  return out;
}

if (both || values.sqlite) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookflow-bench-search-'));
  try {
    await measure('sqlite', { HOOKFLOW_DATA_DIR: dataDir, HOOKFLOW_LOG_LEVEL: 'silent' }, () =>
      loadSqlite(dataDir),
    );
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
if (both || pgFlag) {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const name = 'hookflow_bench_search';
  await admin.query(`drop database if exists ${name}`);
  await admin.query(`create database ${name}`);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  try {
    await measure(
      'postgres',
      {
        HOOKFLOW_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'hookflow-bench-search-')),
        HOOKFLOW_DATABASE_URL: url.toString(),
        HOOKFLOW_ENCRYPTION_KEY: 'bench-key-0123456789abcdef0123456789',
        HOOKFLOW_LOG_LEVEL: 'silent',
      },
      () => loadPostgres(url.toString()),
    );
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
