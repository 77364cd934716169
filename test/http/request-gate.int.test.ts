/**
 * The cap on requests in progress (HOOKFLOW_MAX_CONCURRENT_REQUESTS) must count each request exactly
 * once and give its place back however it ends: answered, refused, or abandoned by a client that
 * disconnects before the answer. A place that leaks is lost until restart, so each case is repeated
 * more times than there are places.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, eventually, startTestServer, type TestServer } from '../helpers/server.js';

const PLACES = 2;
let server: TestServer;
let port: number;

beforeAll(async () => {
  server = await startTestServer({ env: { HOOKFLOW_MAX_CONCURRENT_REQUESTS: String(PLACES) } });
  port = Number(new URL(server.url).port);
  await createActiveWorkflow(server, { name: 'gate', trigger: { path: 'gate' } });
  // Answers when its execution has finished: the request stays in progress until then.
  await createActiveWorkflow(server, {
    name: 'waits',
    trigger: { path: 'waits', response: { mode: 'lastStep' } },
    steps: [{ name: 'greet', type: 'set', fields: { greeting: 'Hello {{ body.param1 }}' } }],
  });
});
afterAll(async () => {
  await server?.close();
});

const post = (body = 'param1=a&param2=b') =>
  fetch(`${server.url}/webhook/gate`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });

/**
 * A webhook request whose client sends `sent` (headers and part of a body) and then waits; resolved
 * once the server has had time to take it in. `answered` says whether the server answered it (it
 * would only if the request was refused).
 */
async function openRequest(sent: string): Promise<{ socket: net.Socket; answered: () => boolean }> {
  let received = '';
  const socket = await new Promise<net.Socket>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(sent, () => resolve(s)));
    s.on('error', reject);
    s.on('data', (d) => (received += d));
  });
  await new Promise((r) => setTimeout(r, 150));
  return { socket, answered: () => received !== '' };
}
const partialBody =
  'POST /webhook/gate HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nparam1=';
const headersOnly = partialBody.slice(0, partialBody.indexOf('\r\n\r\n') + 4);

async function disconnect(sockets: net.Socket[]): Promise<void> {
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<void>((resolve) => {
          socket.once('close', () => resolve());
          socket.destroy();
        }),
    ),
  );
}

/** True once a webhook request is accepted again (every place free). */
const acceptsAgain = async () => {
  const res = await post();
  await res.arrayBuffer();
  return res.status === 200;
};

async function webhookCount(status: number): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = new RegExp(
    `^hookflow_webhook_requests_total\\{mode="production",status="${status}"\\} (\\d+)$`,
    'm',
  );
  return Number(line.exec(text)?.[1] ?? 0);
}

describe('request gate', () => {
  it('gives every place back after requests that were answered', async () => {
    const before = await webhookCount(200);
    for (let i = 0; i < 3 * PLACES; i++) {
      const res = await post();
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect(await webhookCount(200)).toBe(before + 3 * PLACES);
    expect(await acceptsAgain()).toBe(true);
  });

  it('refuses past the cap while webhook bodies are being received, and frees the places when their clients disconnect', async () => {
    for (let round = 0; round < 3; round++) {
      // One at a time, so that neither competes with the other for the last place.
      const held = [];
      for (let i = 0; i < PLACES; i++) held.push(await openRequest(partialBody));
      expect(held.map((h) => h.answered())).toEqual(Array(PLACES).fill(false));
      const res = await post();
      expect(res.status).toBe(503);
      expect(((await res.json()) as { code: string }).code).toBe('overloaded');
      await disconnect(held.map((h) => h.socket));
      await eventually(acceptsAgain);
    }
    // Refusals are answers too and are counted; the abandoned requests got none and are not.
    expect(await webhookCount(503)).toBeGreaterThanOrEqual(3);
  });

  it('frees the places of clients that disconnect before sending any body', async () => {
    for (let i = 0; i < 3 * PLACES; i++) {
      const { socket } = await openRequest(headersOnly);
      await disconnect([socket]);
    }
    await eventually(acceptsAgain);
    // None of them holds a place: PLACES concurrent requests are all accepted.
    const all = await Promise.all(Array.from({ length: PLACES }, () => post()));
    for (const res of all) {
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
  });

  it.each(['gate', 'waits'])(
    'frees the places of clients that send the whole body and leave before the answer (/webhook/%s)',
    async (path) => {
      const request = partialBody.replace('/webhook/gate', `/webhook/${path}`) + 'x'.repeat(93);
      for (let i = 0; i < 3 * PLACES; i++) {
        await new Promise<void>((resolve) => {
          const socket = net.connect(port, '127.0.0.1', () =>
            socket.write(request, () => {
              socket.destroy();
              resolve();
            }),
          );
          socket.on('error', () => resolve());
        });
      }
      await eventually(acceptsAgain);
      const all = await Promise.all(Array.from({ length: PLACES }, () => post()));
      expect(all.map((res) => res.status)).toEqual(Array(PLACES).fill(200));
      await Promise.all(all.map((res) => res.arrayBuffer()));
    },
  );

  it('still frees the places of API requests whose clients go away (the Fastify side)', async () => {
    const wf = (await server.api('POST', '/api/v1/workflows', { name: 'hold' })).body;
    const longPoll = `GET /api/v1/workflows/${wf.id}/test-events?waitSeconds=6 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\n\r\n`;
    const held = [];
    for (let i = 0; i < PLACES; i++) held.push(await openRequest(longPoll));
    expect((await fetch(`${server.url}/healthz`)).status).toBe(503);
    await disconnect(held.map((h) => h.socket));
    // Well before the 6 s long-polls would have ended.
    await eventually(async () => (await fetch(`${server.url}/healthz`)).status === 200, 2_000);
  });
});
