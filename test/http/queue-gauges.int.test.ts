/**
 * The queue gauges on /metrics (SPEC 7d), read when scraped: an executor of one slot whose `http`
 * step's API holds every request falls behind 30 executions, and /metrics shows it —
 * `hookflow_executions_in_flight` is the number of calls the API holds, `hookflow_queue_depth` and
 * `hookflow_queue_oldest_age_seconds` are above 0 — then, once the API answers and the backlog
 * drains, all three are 0. On SQLite and on PostgreSQL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishedExecution } from '../engine/int-helpers.js';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';

let receiver: http.Server;
let receiverUrl = '';
/** Requests the receiver holds unanswered while `holding`. */
const held: http.ServerResponse[] = [];
let holding = true;

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    req.resume();
    if (holding) held.push(res);
    else res.end('{"ok":true}');
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/slow`;
});

afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
});

type Gauges = { inFlight: number; depth: number; age: number };

/** The three gauges as one scrape shows them, read with an API token. */
async function gauges(server: TestServer): Promise<Gauges> {
  const res = await server.api('GET', '/metrics');
  expect(res.status).toBe(200);
  const text = String(res.body);
  const value = (name: string) => {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    if (!m) throw new Error(`/metrics has no ${name}`);
    return Number(m[1]);
  };
  return {
    inFlight: value('hookflow_executions_in_flight'),
    depth: value('hookflow_queue_depth'),
    age: value('hookflow_queue_oldest_age_seconds'),
  };
}

describe.each([
  { dialect: 'sqlite', postgres: false },
  { dialect: 'postgres', postgres: true },
])('queue gauges on $dialect', ({ postgres }) => {
  let server: TestServer;
  beforeAll(async () => {
    held.length = 0;
    holding = true;
    server = await startTestServer({
      postgres,
      // One execution in flight (waiting on the held call), the rest in the queue.
      env: {
        HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
        HOOKFLOW_EXECUTOR_CONCURRENCY: '1',
        HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT: '1',
      },
    });
  });
  afterAll(async () => {
    holding = false;
    for (const res of held.splice(0)) res.end('{}');
    await server?.close();
  });

  it('show the backlog while the executor is behind, and 0 once it drained', async () => {
    await createActiveWorkflow(server, {
      name: 'behind',
      trigger: { path: 'behind' },
      steps: [{ name: 'call', type: 'http', method: 'POST', url: receiverUrl, body: { n: '{{ body.n }}' } }],
    });
    expect(await gauges(server)).toEqual({ inFlight: 0, depth: 0, age: 0 });

    const ids: string[] = [];
    for (let n = 0; n < 30; n++) {
      const res = await fetch(`${server.url}/webhook/behind`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ n }),
      });
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { executionId: string }).executionId);
    }
    await eventually(async () => held.length > 0);
    // The oldest queued one has been due for more than a second by now.
    await new Promise((r) => setTimeout(r, 1_100));
    const behind = await gauges(server);
    // The executor claims a few executions ahead of its slot, so not all 29 others are in the queue.
    expect(behind.depth).toBeGreaterThan(0);
    expect(behind.depth).toBeLessThanOrEqual(29);
    expect(behind.age).toBeGreaterThanOrEqual(1);
    expect(behind.inFlight).toBe(held.length);

    holding = false;
    for (const res of held.splice(0)) res.end('{"ok":true}');
    for (const id of ids) expect((await finishedExecution(server, id, 20_000)).status).toBe('succeeded');
    // An execution leaves the in-flight count just after its result is stored (its notices are sent first).
    const drained = await eventually(async () => {
      const g = await gauges(server);
      return g.inFlight === 0 && g;
    });
    expect(drained).toEqual({ inFlight: 0, depth: 0, age: 0 });
  });
});
