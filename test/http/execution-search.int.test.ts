/**
 * Executions search by a field of the trigger item (issue 19): `where=<path>=<value>` on SQLite and
 * PostgreSQL, real server.
 * - Windowed (any field): with the other filters; a bad condition is 400; a search past the window
 *   of 10 000 executions answers a page with no items and a cursor that continues it.
 * - Searchable fields (`settings.searchFields`): the declared fields of the trigger item are
 *   written to `execution_fields` with their execution (every way one is created: the webhook's
 *   plain insert, its insert with other writes, retry, replay, error workflows), searched through
 *   that index with full pages and exact results, deleted with their executions (retention) and
 *   their workflow; the answer's `search` says which way a search went.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executions as executionsCli } from '../../src/cli/executions.js';
import { newId, nowIso } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { Retention } from '../../src/queue/retention.js';
import { MAX_VALUE_LENGTH, SEARCH_WINDOW } from '../../src/store/execution-search.js';
import { executionsRepo, queuedExecution } from '../../src/store/executions.js';
import { finishedExecution } from '../engine/int-helpers.js';
import {
  createActiveWorkflow,
  createWorkflow,
  eventually,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';

const ids = (page: { items: { id: string }[] }) => page.items.map((e) => e.id);

describe.each([
  { dialect: 'sqlite', postgres: false },
  { dialect: 'postgres', postgres: true },
])('GET /executions?where= on $dialect', ({ dialect, postgres }) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ postgres });
  });
  afterAll(() => server?.close());

  const send = async (path: string, body: unknown, query = '') => {
    const res = await fetch(`${server.url}/webhook/${path}${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const id = ((await res.json()) as { executionId: string }).executionId;
    await finishedExecution(server, id);
    return id;
  };
  const search = async (q: string) => (await server.api('GET', `/api/v1/executions?${q}`)).body;
  /** `hookflow executions list --workflow <id> --where <where>` against the server: exit code, stdout, stderr. */
  const listCli = async (workflowId: string, where: string) => {
    let out = '';
    let err = '';
    const code = await executionsCli(
      ['list', '--workflow', workflowId, '--where', where, '--url', server.url, '--token', server.token],
      {
        env: {},
        showHelp: () => 2,
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: (t: string) => (err += t) },
      },
    );
    return { code, out, err };
  };

  it('finds executions by a field of their trigger item', async () => {
    const wf = await createActiveWorkflow(server, {
      name: `search-${dialect}`,
      trigger: { path: `search-${dialect}` },
    });
    const other = await createActiveWorkflow(server, {
      name: `other-${dialect}`,
      trigger: { path: `other-${dialect}` },
    });
    const o1 = await send(`search-${dialect}`, { order_id: 'o-1', customer: { email: 'a@example.com' } });
    await send(`search-${dialect}`, { order_id: 'o-2' });
    const n42 = await send(`search-${dialect}`, { order_id: 42 }, '?src=shop');
    const otherO1 = await send(`other-${dialect}`, { order_id: 'o-1' });

    const byOrder = await search('where=body.order_id=o-1');
    expect(byOrder.items.map((e: { id: string }) => e.id)).toEqual([otherO1, o1]);
    expect(byOrder.nextCursor).toBeNull();
    expect(
      (await search(`workflowId=${wf.id}&where=body.order_id=o-1`)).items.map((e: { id: string }) => e.id),
    ).toEqual([o1]);
    expect((await search(`workflowId=${other.id}&where=body.order_id=o-1`)).items).toHaveLength(1);
    expect((await search('where=body.order_id=42')).items.map((e: { id: string }) => e.id)).toEqual([n42]);
    expect((await search('where=query.src=shop')).items.map((e: { id: string }) => e.id)).toEqual([n42]);
    expect(
      (await search('where=body.customer.email=a@example.com')).items.map((e: { id: string }) => e.id),
    ).toEqual([o1]);
    expect((await search(`where=${encodeURIComponent('body.order_id=o-3')}`)).items).toEqual([]);
    expect((await search('status=failed&where=body.order_id=o-1')).items).toEqual([]);

    // Paging through matches.
    const first = await search('limit=1&where=body.order_id=o-1');
    expect(first.items.map((e: { id: string }) => e.id)).toEqual([otherO1]);
    const second = await search(`limit=1&where=body.order_id=o-1&cursor=${first.nextCursor}`);
    expect(second.items.map((e: { id: string }) => e.id)).toEqual([o1]);

    for (const bad of [
      'where=nothing',
      'where==x',
      'where=body..x=1',
      `where=${encodeURIComponent('body.a b=1')}`,
    ]) {
      const res = await server.api('GET', `/api/v1/executions?${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });

  it('searches a window of executions per request and continues with the cursor', async () => {
    const wf = await createActiveWorkflow(server, {
      name: `window-${dialect}`,
      trigger: { path: `window-${dialect}` },
    });
    const needle = await send(`window-${dialect}`, { order_id: 'needle' });
    // Newer executions of the same workflow, written straight to the store.
    const rows = Array.from({ length: SEARCH_WINDOW + 50 }, () =>
      queuedExecution({
        id: newId(),
        workflow_id: wf.id,
        workflow_version: 1,
        mode: 'production',
        trigger: JSON.stringify({ body: { order_id: 'hay' } }),
        created_at: nowIso(),
      }),
    );
    for (const row of rows) row.status = 'succeeded';
    for (let i = 0; i < rows.length; i += 500)
      await server.hookflow.store.db
        .insertInto('executions')
        .values(rows.slice(i, i + 500))
        .execute();

    const first = await search(`workflowId=${wf.id}&where=body.order_id=needle`);
    expect(first.items).toEqual([]);
    expect(typeof first.nextCursor).toBe('string');
    const second = await search(`workflowId=${wf.id}&where=body.order_id=needle&cursor=${first.nextCursor}`);
    expect(second.items.map((e: { id: string }) => e.id)).toEqual([needle]);
    expect(second.nextCursor).toBeNull();

    // The CLI follows the cursor until it has found what was asked for (or the search is over).
    const { code, out } = await listCli(wf.id, 'body.order_id=needle');
    expect(code).toBe(0);
    expect(out).toContain(needle);
    expect(out.trim().split('\n')).toHaveLength(2);
  });

  /** Posts without waiting for the execution to finish (the 2xx means it is committed). */
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}/webhook/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { executionId: string }).executionId;
  };
  const fieldsOf = (executionId: string) =>
    server.hookflow.store.db
      .selectFrom('execution_fields')
      .select(['workflow_id', 'path', 'value'])
      .where('execution_id', '=', executionId)
      .orderBy('path')
      .execute();
  /** Every page of a search, following nextCursor; each page's size and the search info. */
  const allPages = async (q: string) => {
    const pages: { items: { id: string }[]; nextCursor: string | null; search: { indexed: boolean } }[] = [];
    let cursor: string | null = null;
    do {
      const page = await search(`${q}${cursor ? `&cursor=${cursor}` : ''}`);
      pages.push(page);
      cursor = page.nextCursor;
    } while (cursor && pages.length < 20);
    return pages;
  };

  it('indexes the declared fields of each accepted request with it, and searches them exactly across pages', async () => {
    const fields = ['body.order_id', 'headers.x-github-event', 'body.n', 'body.ok'];
    const plain = await createActiveWorkflow(server, {
      name: `orders-${dialect}`,
      trigger: { path: `orders-${dialect}` },
      settings: { searchFields: fields },
    });
    expect(plain.settings).toEqual({ searchFields: fields });
    // Idempotency keys make the request's insert go with its other writes (ingest's `write`).
    const keyed = await createActiveWorkflow(server, {
      name: `keyed-${dialect}`,
      trigger: { path: `keyed-${dialect}`, options: { idempotency: { header: 'idempotency-key' } } },
      settings: { searchFields: ['body.order_id'] },
    });
    const undeclared = await createActiveWorkflow(server, {
      name: `plain-${dialect}`,
      trigger: { path: `plain-${dialect}` },
    });
    expect(undeclared.settings).toEqual({});

    const o1: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = await post(`orders-${dialect}`, { order_id: 'o-1', n: i }, { 'x-github-event': 'push' });
      // Committed (the 2xx) with its fields.
      expect(await fieldsOf(id)).toEqual([
        { workflow_id: plain.id, path: 'body.n', value: String(i) },
        { workflow_id: plain.id, path: 'body.order_id', value: 'o-1' },
        { workflow_id: plain.id, path: 'headers.x-github-event', value: 'push' },
      ]);
      o1.unshift(id);
    }
    const o2 = await post(`orders-${dialect}`, { order_id: 'o-2', n: 42, ok: true, nested: { a: 1 } });
    expect(await fieldsOf(o2)).toEqual([
      { workflow_id: plain.id, path: 'body.n', value: '42' },
      { workflow_id: plain.id, path: 'body.ok', value: 'true' },
      { workflow_id: plain.id, path: 'body.order_id', value: 'o-2' },
    ]);
    // Objects, null and over-long strings are not indexed.
    const odd = await post(`orders-${dialect}`, { order_id: 'x'.repeat(MAX_VALUE_LENGTH + 1), n: null });
    expect(await fieldsOf(odd)).toEqual([]);
    const keyedO1 = await post(`keyed-${dialect}`, { order_id: 'o-1' }, { 'idempotency-key': 'k1' });
    expect(await fieldsOf(keyedO1)).toEqual([{ workflow_id: keyed.id, path: 'body.order_id', value: 'o-1' }]);
    const undeclaredO1 = await post(`plain-${dialect}`, { order_id: 'o-1' });
    expect(await fieldsOf(undeclaredO1)).toEqual([]);

    // Full pages of 2, newest first, to the last match; then nothing more.
    const pages = await allPages(`workflowId=${plain.id}&where=body.order_id=o-1&limit=2`);
    expect(pages.map((p) => p.items.length)).toEqual([2, 2, 1]);
    expect(pages.flatMap(ids)).toEqual(o1);
    expect(pages.at(-1)!.nextCursor).toBeNull();
    expect(pages[0]!.search).toEqual({ path: 'body.order_id', indexed: true, workflowIds: [plain.id] });

    const push = await search(`workflowId=${plain.id}&where=headers.x-github-event=push`);
    expect(ids(push)).toEqual(o1);
    expect(ids(await search(`workflowId=${plain.id}&where=body.n=42`))).toEqual([o2]);
    expect(ids(await search(`workflowId=${plain.id}&where=body.ok=true`))).toEqual([o2]);
    expect((await search(`workflowId=${plain.id}&where=body.order_id=o-3`)).items).toEqual([]);
    expect((await search(`workflowId=${plain.id}&status=failed&where=body.order_id=o-1`)).items).toEqual([]);
    const produced = await search(`workflowId=${plain.id}&mode=production&where=body.order_id=o-2`);
    expect(ids(produced)).toEqual([o2]);

    // Without a workflow filter: the index of every workflow declaring the field, merged newest
    // first (the undeclared workflow's execution is not in it, and the answer says so).
    const everywhere = await search('where=body.order_id=o-1&limit=3');
    expect(everywhere.search.indexed).toBe(true);
    expect([...everywhere.search.workflowIds].sort()).toEqual([plain.id, keyed.id].sort());
    expect(everywhere.search.hint).toContain('declare body.order_id');
    expect(ids(everywhere)).toEqual([keyedO1, o1[0], o1[1]]);
    const rest = await allPages('where=body.order_id=o-1&limit=3');
    expect(rest.flatMap(ids)).toEqual([keyedO1, ...o1]);

    // An undeclared field, or a value too long for the index: windowed, and told how to index it.
    const windowed = await search(`workflowId=${undeclared.id}&where=body.order_id=o-1`);
    expect(ids(windowed)).toEqual([undeclaredO1]);
    expect(windowed.search).toMatchObject({ path: 'body.order_id', indexed: false, window: SEARCH_WINDOW });
    expect(windowed.search.hint).toContain('"searchFields": ["body.order_id"]');
    const other = await search(`workflowId=${plain.id}&where=body.nested.a=1`);
    expect(ids(other)).toEqual([o2]);
    expect(other.search.indexed).toBe(false);
    const long = await search(
      `workflowId=${plain.id}&where=body.order_id=${'x'.repeat(MAX_VALUE_LENGTH + 1)}`,
    );
    expect(ids(long)).toEqual([odd]);
    expect(long.search.indexed).toBe(false);
    // A list without where is the list contract alone.
    expect(Object.keys(await search(`workflowId=${plain.id}&limit=1`)).sort()).toEqual([
      'items',
      'nextCursor',
    ]);

    // The CLI says when a search is not indexed, and how to index it.
    const { code, out, err } = await listCli(undeclared.id, 'body.order_id=o-1');
    expect(code).toBe(0);
    expect(out).toContain(undeclaredO1);
    expect(err).toContain('Not indexed');
    expect(err).toContain('declare body.order_id as a searchable field');
  });

  it('indexes retries, replays and error executions by the version they run', async () => {
    const errors = await createWorkflow(server, {
      name: `alerts-${dialect}`,
      settings: { searchFields: ['execution.workflowId'] },
    });
    const wf = await createActiveWorkflow(server, {
      name: `fails-${dialect}`,
      trigger: { path: `fails-${dialect}` },
      settings: { searchFields: ['body.order_id'], errorWorkflowId: errors.id },
      steps: [{ name: 'count', type: 'set', fields: { n: '{{ $number(body.n) }}' } }],
    });
    const failed = await post(`fails-${dialect}`, { order_id: 'r-1', n: 'not a number' });
    expect((await finishedExecution(server, failed)).status).toBe('failed');

    const retried = (await server.api('POST', `/api/v1/executions/${failed}/retry`)).body.executionId;
    const replayed = (await server.api('POST', `/api/v1/executions/${failed}/replay`)).body.executionId;
    const drafted = (await server.api('POST', `/api/v1/executions/${failed}/replay`, { target: 'draft' }))
      .body.executionId;
    for (const id of [retried, replayed, drafted])
      expect(await fieldsOf(id)).toEqual([{ workflow_id: wf.id, path: 'body.order_id', value: 'r-1' }]);
    expect(ids(await search(`workflowId=${wf.id}&where=body.order_id=r-1`))).toEqual([
      drafted,
      replayed,
      retried,
      failed,
    ]);

    // The error workflow's executions (the retries fail too), indexed by its own declaration.
    const alerts = await eventually(async () => {
      const page = await search(`workflowId=${errors.id}&where=execution.workflowId=${wf.id}`);
      return page.items.some(
        (e: { trigger: { execution: { id: string } } }) => e.trigger.execution.id === failed,
      )
        ? page
        : undefined;
    }, 10_000);
    expect(alerts.search.indexed).toBe(true);
    expect((await search(`workflowId=${errors.id}&where=execution.workflowId=nope`)).items).toEqual([]);
  });

  it('refuses bad searchFields with the field, and keeps settings without them as they were', async () => {
    const bad = async (searchFields: unknown) => {
      const res = await server.api('POST', '/api/v1/workflows', { name: 'bad', settings: { searchFields } });
      expect(res.status, JSON.stringify(searchFields)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      return (res.body.fields as { field: string }[]).map((f) => f.field);
    };
    expect(await bad(['body.a', 'body..b'])).toContain('/settings/searchFields/1');
    expect(await bad(['body.a b'])).toContain('/settings/searchFields/0');
    expect((await bad(['a', 'b', 'c', 'd', 'e', 'f']))[0]).toMatch(/^\/settings\/searchFields/);
    expect((await bad(['a', 'a']))[0]).toMatch(/^\/settings\/searchFields/);
    expect((await bad([{ path: 'body.a' }]))[0]).toMatch(/^\/settings\/searchFields/);

    const wf = await createWorkflow(server, { name: 'settings', settings: { searchFields: ['body.id'] } });
    const patched = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      settings: { searchFields: ['body.id', 'query.src'] },
    });
    expect(patched.body.settings).toEqual({ searchFields: ['body.id', 'query.src'] });
    const badPatch = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      settings: { searchFields: ['body.'] },
    });
    expect(badPatch.status).toBe(400);
    const cleared = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      settings: { searchFields: null },
    });
    expect(cleared.body.settings).toEqual({});
    const empty = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, { settings: { searchFields: [] } });
    expect(empty.body.settings).toEqual({});

    // The OpenAPI document describes both.
    // biome-ignore lint/suspicious/noExplicitAny: a JSON document read in a test
    const doc: any = await (await fetch(`${server.url}/api/v1/openapi.json`)).json();
    const list = doc.paths['/api/v1/executions'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(list.properties)).toEqual(['items', 'nextCursor', 'search']);
    expect(JSON.stringify(doc.paths['/api/v1/workflows'].post)).toContain('searchFields');
  });

  it("writes an execution's fields in its own transaction: a batch that fails keeps neither", async () => {
    const { store } = server.hookflow;
    const wf = await createWorkflow(server, {
      name: `atomic-${dialect}`,
      settings: { searchFields: ['body.k'] },
    });
    const row = () =>
      queuedExecution({
        id: newId(),
        workflow_id: wf.id,
        workflow_version: 1,
        mode: 'production',
        trigger: '{"body":{"k":"v"}}',
        created_at: nowIso(),
      });
    const fieldRow = (id: string) => ({ workflow_id: wf.id, path: 'body.k', value: 'v', execution_id: id });
    const first = row();
    const again = { ...first };
    // The hot path (group commit): the second insert repeats the first's id, so the batch fails.
    await expect(
      store.writeHot([
        { kind: 'insert', row: first, fields: [fieldRow(first.id)] },
        { kind: 'insert', row: again },
      ]),
    ).rejects.toThrow();
    expect(await fieldsOf(first.id)).toEqual([]);
    // Retry, replay and error workflows: executionsRepo.insert inside a transaction that fails later.
    const second = row();
    await expect(
      store.transaction(async (trx) => {
        await executionsRepo.insert(trx, second, [fieldRow(second.id)]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await fieldsOf(second.id)).toEqual([]);
    // And committed together when nothing fails.
    await store.writeHot([{ kind: 'insert', row: first, fields: [fieldRow(first.id)] }]);
    expect(await fieldsOf(first.id)).toEqual([{ workflow_id: wf.id, path: 'body.k', value: 'v' }]);
  });

  it('deletes the fields with their executions (retention) and with their workflow', async () => {
    const { db } = server.hookflow.store;
    const wf = await createActiveWorkflow(server, {
      name: `gone-${dialect}`,
      trigger: { path: `gone-${dialect}` },
      settings: { searchFields: ['body.k'] },
    });
    const sent = [await post(`gone-${dialect}`, { k: 'a' }), await post(`gone-${dialect}`, { k: 'b' })];
    for (const id of sent) await finishedExecution(server, id);
    const count = async (column: 'workflow_id' | 'execution_id', values: string[]) =>
      (await db.selectFrom('execution_fields').select('value').where(column, 'in', values).execute()).length;
    expect(await count('execution_id', sent)).toBe(2);

    // Keep only the newest execution of the whole store: the older one's field goes with it.
    await new Retention({
      store: server.hookflow.store,
      log: createLogger('silent', 2),
      maxAgeMs: undefined,
      maxCount: 1,
    }).sweep();
    expect(await db.selectFrom('executions').select('id').where('id', '=', sent[0]!).execute()).toEqual([]);
    expect(await count('execution_id', [sent[0]!])).toBe(0);
    expect(await count('execution_id', [sent[1]!])).toBe(1);

    expect((await server.api('DELETE', `/api/v1/workflows/${wf.id}`)).status).toBe(204);
    expect(await count('workflow_id', [wf.id])).toBe(0);
  });
});
