/**
 * HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST (SPEC 7d): the `http` steps of one process open at most that
 * many connections to one origin. A local receiver counts the connections open at once while 10
 * executions call it together (each answer takes 150 ms); with the cap at 2 it never sees more
 * than 2, and without it (the default, 128) it sees more — so the cap, not the executor, is what
 * held them to 2.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, startTestServer } from '../helpers/server.js';
import { finishedExecution } from './int-helpers.js';

let receiver: http.Server;
let receiverUrl = '';
/** The connections open now, and the most open at once, of the current case. */
let open = new Set<object>();
let most = 0;

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    req.resume();
    setTimeout(() => res.end('{"ok":true}'), 150);
  });
  receiver.on('connection', (socket) => {
    // A connection of an earlier case closing now does not count against this one.
    const mine = open;
    mine.add(socket);
    most = Math.max(most, mine.size);
    socket.on('close', () => mine.delete(socket));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/api`;
});

afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
});

describe('outbound connections per host', () => {
  it.each([
    { setting: '2', cap: '2', expectMost: (n: number) => expect(n).toBe(2) },
    { setting: 'unset (128)', cap: undefined, expectMost: (n: number) => expect(n).toBeGreaterThan(2) },
  ])(
    'HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST $setting: the connections 10 executions calling one host open at once',
    async ({ cap, expectMost }) => {
      open = new Set();
      most = 0;
      const server = await startTestServer({
        env: {
          HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
          HOOKFLOW_EXECUTOR_CONCURRENCY: '10',
          ...(cap ? { HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST: cap } : {}),
        },
      });
      try {
        await createActiveWorkflow(server, {
          name: 'fan-in',
          trigger: { path: 'fan-in' },
          steps: [
            { name: 'call', type: 'http', method: 'POST', url: receiverUrl, body: { n: '{{ body.n }}' } },
          ],
        });
        const ids = await Promise.all(
          Array.from({ length: 10 }, async (_, n) => {
            const res = await fetch(`${server.url}/webhook/fan-in`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ n }),
            });
            expect(res.status).toBe(200);
            return ((await res.json()) as { executionId: string }).executionId;
          }),
        );
        for (const id of ids) expect((await finishedExecution(server, id, 15_000)).status).toBe('succeeded');
        expectMost(most);
      } finally {
        await server.close();
      }
    },
  );
});
