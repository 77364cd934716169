/**
 * Waits for an event by key under load (SPEC 7g), on SQLite and PostgreSQL: 1 000 runs wait on
 * 1 000 distinct keys; 1 000 matching events sent concurrently resume each run exactly once, with
 * its own event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';

const RUNS = 1_000;
/** Requests in flight at once from this test (the server takes far more; the test's client need not). */
const CONCURRENCY = 100;

async function pool<T>(items: readonly T[], each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < items.length) await each(items[next++]!);
    }),
  );
}

describe.each([
  { dialect: 'sqlite', postgres: false },
  { dialect: 'postgres', postgres: true },
])('1 000 event waits on $dialect', ({ postgres }) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ postgres });
  });

  afterAll(async () => {
    await server?.close();
  });

  const count = async (workflowId: string, status: string): Promise<number> => {
    let n = 0;
    let cursor: string | null = null;
    do {
      const res = await server.api(
        'GET',
        `/api/v1/executions?workflowId=${workflowId}&status=${status}&limit=200${cursor ? `&cursor=${cursor}` : ''}`,
      );
      n += res.body.items.length;
      cursor = res.body.nextCursor;
    } while (cursor);
    return n;
  };

  it('each run is resumed exactly once, with its own event', { timeout: 300_000 }, async () => {
    const events = await createActiveWorkflow(server, {
      name: 'events',
      trigger: { path: 'events' },
      steps: [{ name: 'seen', type: 'set', fields: { id: '{{ body.object.id }}' } }],
    });
    const waiter = await createActiveWorkflow(server, {
      name: 'waiter',
      trigger: { path: 'waiter' },
      steps: [
        {
          name: 'event',
          type: 'wait',
          for: 'event',
          workflowId: events.id,
          match: '{{ body.object.id }}',
          equals: '{{ $trigger.body.key }}',
          timeoutSeconds: 3_600,
        },
        {
          name: 'got',
          type: 'set',
          fields: { key: '{{ $trigger.body.key }}', id: '{{ $.body.object.id }}' },
        },
      ],
    });
    const keys = Array.from({ length: RUNS }, (_, i) => `obj_${i}`);
    const runs = new Map<string, string>();
    await pool(keys, async (key) => {
      const res = await fetch(`${server.url}/webhook/waiter`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key }),
      });
      expect(res.status).toBe(200);
      runs.set(key, res.headers.get('x-hookflow-execution-id')!);
    });
    // Every run registered its wait (waiting, or looking again this moment).
    await eventually(
      async () =>
        (await count(waiter.id, 'succeeded')) === 0 && (await count(waiter.id, 'waiting')) >= RUNS * 0.9,
      120_000,
    );

    await pool(keys, async (key) => {
      const res = await fetch(`${server.url}/webhook/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ object: { id: key } }),
      });
      expect(res.status).toBe(200);
    });
    await eventually(async () => (await count(waiter.id, 'succeeded')) === RUNS, 180_000);
    await eventually(async () => (await count(events.id, 'succeeded')) === RUNS, 60_000);

    // Each with its own event, and each wait resumed once (one record of the wait, resumed).
    const rows = await server.hookflow.store.db
      .selectFrom('execution_waits')
      .select(['execution_id', 'status', 'item', 'match_key'])
      .execute();
    expect(rows).toHaveLength(RUNS);
    for (const row of rows) {
      expect(row.status).toBe('resumed');
      expect(JSON.parse(row.item!).body).toEqual({ object: { id: row.match_key } });
    }
    for (const [key, id] of [...runs].filter((_, i) => i % 50 === 0)) {
      const e = (await server.api('GET', `/api/v1/executions/${id}`)).body;
      expect(e.steps[1].output).toEqual({ key, id: key });
    }
  });
});
