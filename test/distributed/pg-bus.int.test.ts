/**
 * PgBus on its own (two instances stand for two processes): local delivery is synchronous and
 * happens once; other processes get every notice, in order, batched into NOTIFY payloads under
 * PostgreSQL's 8000-byte limit; identical notices published together are sent once; after the
 * connection is cut the bus reconnects and tells its subscribers to resync.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { PG_BUS_APPLICATION, PgBus } from '../../src/bus/pg-bus.js';
import { within } from '../helpers/cluster.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

let db: TestDatabase;
let a: PgBus;
let b: PgBus;
const log = createLogger('silent');

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});
afterEach(async () => {
  await a?.close();
  await b?.close();
});

const connect = () => PgBus.connect({ url: db.url, log });

describe('PgBus', () => {
  it('delivers locally before publish returns, once, and to the other process in publish order', async () => {
    [a, b] = await Promise.all([connect(), connect()]);
    const local: string[] = [];
    const remote: string[] = [];
    a.subscribe('workflow.changed', ({ workflowId }) => {
      local.push(workflowId);
    });
    b.subscribe('workflow.changed', ({ workflowId }) => {
      remote.push(workflowId);
    });

    await a.publish('workflow.changed', { workflowId: 'first' });
    expect(local).toEqual(['first']);

    // 300 notices of ~120 bytes: more than one 8000-byte payload.
    const ids = Array.from({ length: 300 }, (_, i) => `wf-${String(i).padStart(4, '0')}-${'x'.repeat(80)}`);
    await Promise.all(ids.map((workflowId) => a.publish('workflow.changed', { workflowId })));

    await within(5_000, async () => remote.length >= 301);
    expect(remote).toEqual(['first', ...ids]);
    // a's own notices come back on its LISTEN too; they are not delivered a second time.
    await new Promise((r) => setTimeout(r, 100));
    expect(local).toEqual(['first', ...ids]);
  });

  it('sends identical notices published together once', async () => {
    [a, b] = await Promise.all([connect(), connect()]);
    let wakeUps = 0;
    b.subscribe('execution.queued', () => {
      wakeUps++;
    });
    await Promise.all(Array.from({ length: 50 }, () => a.publish('execution.queued', {})));
    await within(5_000, async () => wakeUps > 0);
    await new Promise((r) => setTimeout(r, 200));
    // Published in one turn of the event loop: one NOTIFY, the identical notices in it once.
    expect(wakeUps).toBe(1);
  });

  it('sends the notices published in one turn of the event loop in one NOTIFY', async () => {
    a = await connect();
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    try {
      const payloads: string[] = [];
      listener.on('notification', (msg) => payloads.push(msg.payload ?? ''));
      await listener.query('listen hookflow');
      // Eight results recorded in one group commit: eight notices in one turn.
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          a.publish('execution.finished', { executionId: `e${i}`, status: 'succeeded' }),
        ),
      );
      await within(5_000, async () => payloads.length > 0);
      await new Promise((r) => setTimeout(r, 200));
      expect(payloads).toHaveLength(1);
      expect((JSON.parse(payloads[0]!) as { m: unknown[] }).m).toHaveLength(8);
    } finally {
      await listener.end();
    }
  });

  it('reconnects after its connection is cut, tells subscribers to resync, and carries notices again', async () => {
    [a, b] = await Promise.all([connect(), connect()]);
    let resynced = 0;
    b.subscribe('bus.resynced', () => {
      resynced++;
    });
    const remote: string[] = [];
    b.subscribe('listener.changed', ({ workflowId }) => {
      remote.push(workflowId);
    });

    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      const cut = await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()',
        [PG_BUS_APPLICATION],
      );
      expect(cut.rowCount).toBe(2);
    } finally {
      await admin.end();
    }

    await within(5_000, async () => resynced === 1 && a.connected && b.connected);
    await a.publish('listener.changed', { workflowId: 'after' });
    await within(2_000, async () => remote.includes('after'));
  });

  it('stays local after close', async () => {
    a = await connect();
    let seen = 0;
    a.subscribe('workflow.changed', () => {
      seen++;
    });
    await a.close();
    await a.publish('workflow.changed', { workflowId: 'x' });
    expect(a.connected).toBe(false);
    expect(seen).toBe(0);
  });
});
