/**
 * Concurrency keys and newest wins (SPEC 7d) on one `hookflow start` (SQLite), over HTTP: 20
 * customers × 50 events in random arrival reach the receiver one at a time per customer, in the
 * order accepted, while customers run in parallel; late, older events are skipped. Saving checks
 * the setting. (test/distributed/concurrency-keys.int.test.ts: the same across two workers on
 * PostgreSQL.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { eventually, tempDir } from '../helpers/server.js';
import {
  type Api,
  activator,
  expectFifoScenario,
  expectNewestWins,
  keyedWorkflow,
  type Receiver,
  senderTo,
  startReceiver,
} from './concurrency-scenario.js';

let server: ServerProcess;
let token: string;
let receiver: Receiver;

beforeAll(async () => {
  const dataDir = tempDir();
  const env = { HOOKFLOW_DATA_DIR: dataDir, HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' };
  const created = await runCli(['tokens', 'create', '--name', 't'], env);
  if (created.code !== 0) throw new Error(created.stderr);
  token = created.stdout.trim().split('\n').at(-1)!;
  receiver = await startReceiver(5);
  server = await startServerProcess({ ...env, HOOKFLOW_LOG_LEVEL: 'warn' });
});

afterAll(async () => {
  server?.child.kill('SIGKILL');
  await server?.exited;
  await receiver?.close();
});

const api: Api = async (method, route, body) => {
  const res = await fetch(`${server.url}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
};

const activeWorkflow = activator(api);
const sender = senderTo(() => server.url);

describe('concurrency keys on hookflow start (SQLite)', () => {
  it('20 keys × 50 events in random arrival: one at a time per key, in the order accepted, keys in parallel', async () => {
    const { workflowId: id, accepted } = await expectFifoScenario(
      { api, send: sender, receiver },
      { key: '{{ body.customer }}', limit: 1 },
      60_000,
    );
    const one = await api('GET', `/api/v1/executions/${accepted.get('cus_3')![0]}`);
    expect(one.body).toMatchObject({
      workflowId: id,
      status: 'succeeded',
      concurrencyKey: 'cus_3',
      skipReason: null,
    });
  }, 120_000);

  it('newest wins: late, older events are skipped (superseded), equal ones run', async () => {
    const id = await activeWorkflow(
      keyedWorkflow('newest', receiver.url, {
        key: '{{ body.customer }}',
        newestWins: '{{ body.updated }}',
      }),
    );
    await expectNewestWins(api, sender('newest'), receiver, id);
  }, 60_000);

  it('a caller waiting for the result (lastStep) of a superseded event is told it was skipped', async () => {
    await activeWorkflow({
      ...keyedWorkflow('waited', receiver.url, {
        key: '{{ body.customer }}',
        newestWins: '{{ body.updated }}',
      }),
      trigger: { path: 'waited', response: { mode: 'lastStep' } },
    });
    const call = (updated: number) =>
      fetch(`${server.url}/webhook/waited`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customer: 'cus_waited', seq: updated, updated }),
      });
    const newer = await call(10);
    expect(newer.status).toBe(200);
    const older = await call(5);
    expect(older.status).toBe(200);
    expect(await older.json()).toEqual({
      message: 'Skipped: a newer event of the same concurrency key had already started; no step ran.',
      executionId: older.headers.get('x-hookflow-execution-id'),
      skipReason: 'superseded',
    });
  });

  it('a key that evaluates to null gives no key: the execution runs as any other', async () => {
    await activeWorkflow(keyedWorkflow('nokey', receiver.url, { key: '{{ body.nothing }}' }));
    const executionId = await sender('nokey')({ customer: 'nokey', seq: 0 });
    const done = await eventually(async () => {
      const e = await api('GET', `/api/v1/executions/${executionId}`);
      return e.body.status === 'succeeded' && e.body;
    }, 10_000);
    expect(done.concurrencyKey).toBeNull();
  });

  it('the setting is checked on save: 400 validation_failed naming the field', async () => {
    const bad = [
      [{ key: '{{ body.( }}' }, '/settings/concurrency/key'],
      [{ key: '{{ body.id }}', limit: 0 }, '/settings/concurrency/limit'],
      [{ key: '{{ body.id }}', newestWins: '{{ $$$ ( }}' }, '/settings/concurrency/newestWins'],
      [{ limit: 2 }, '/settings/concurrency'],
    ] as const;
    for (const [concurrency, field] of bad) {
      const res = await api('POST', '/api/v1/workflows', {
        name: 'bad',
        trigger: { path: `bad-${Math.random()}` },
        settings: { concurrency },
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(JSON.stringify(res.body)).toContain(field);
    }
    // Kept as saved, and cleared with null.
    const ok = await api('POST', '/api/v1/workflows', {
      name: 'ok',
      trigger: { path: 'ok-keys' },
      settings: {
        concurrency: { key: '{{ body.customer.id }}', limit: 3, newestWins: '{{ body.updated }}' },
      },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.settings.concurrency).toEqual({
      key: '{{ body.customer.id }}',
      limit: 3,
      newestWins: '{{ body.updated }}',
    });
    const cleared = await api('PATCH', `/api/v1/workflows/${ok.body.id}`, {
      settings: { concurrency: null },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.settings.concurrency).toBeUndefined();
  });
});
