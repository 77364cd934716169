/**
 * Executions search by a field of the trigger item (issue 19): `where=<path>=<value>` on SQLite and
 * PostgreSQL, with the other filters; a bad condition is 400; a search past the window of 10 000
 * executions answers a page with no items and a cursor that continues it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executions as executionsCli } from '../../src/cli/executions.js';
import { newId, nowIso } from '../../src/ids.js';
import { SEARCH_WINDOW } from '../../src/store/execution-search.js';
import { queuedExecution } from '../../src/store/executions.js';
import { finishedExecution } from '../engine/int-helpers.js';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';

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
    let out = '';
    const code = await executionsCli(
      [
        'list',
        '--workflow',
        wf.id,
        '--where',
        'body.order_id=needle',
        '--url',
        server.url,
        '--token',
        server.token,
      ],
      {
        env: {},
        showHelp: () => 2,
        stdout: {
          write: (t: string) => {
            out += t;
          },
        },
        stderr: { write: () => undefined },
      },
    );
    expect(code).toBe(0);
    expect(out).toContain(needle);
    expect(out.trim().split('\n')).toHaveLength(2);
  });
});
