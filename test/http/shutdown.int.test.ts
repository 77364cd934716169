/**
 * Stopping the server (SIGTERM → hookflow.close()) answers the requests in progress and then ends
 * every connection, without waiting out the timeouts of clients that keep theirs open: a browser's
 * preconnect that never sent a byte (headers timeout, 30 s) or a keep-alive client between requests
 * (keep-alive timeout, 72 s) used to keep a stopping process up that long.
 */
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let port: number;

beforeAll(async () => {
  server = await startTestServer();
  port = Number(new URL(server.url).port);
  await createActiveWorkflow(server, { name: 'orders', trigger: { path: 'orders' } });
});
afterAll(async () => {
  await server?.close();
});

/** A raw connection: what it received, and a promise of its end. */
async function connect(): Promise<{ socket: net.Socket; received: () => string; closed: Promise<void> }> {
  let received = '';
  const socket = await new Promise<net.Socket>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
  });
  socket.on('data', (d) => (received += d));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, received: () => received, closed };
}

const until = async (check: () => boolean) => {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
};

it('answers the request in progress, then closes idle and silent connections at once', async () => {
  // Sends nothing (a browser's preconnect).
  const silent = await connect();
  // One request answered, the connection kept alive for the next.
  const keptAlive = await connect();
  keptAlive.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(() => keptAlive.received().includes('\r\n\r\n'));
  expect(keptAlive.received()).toMatch(/^HTTP\/1\.1 200 /);
  // A webhook call whose body is still on its way when the server starts closing.
  const body = 'param1=a&param2=b';
  const inProgress = await connect();
  inProgress.socket.write(
    `POST /webhook/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\nparam1=a`,
  );
  await new Promise((r) => setTimeout(r, 100));

  const closing = server.hookflow.close();
  await Promise.all([silent.closed, keptAlive.closed]);
  expect(inProgress.socket.destroyed).toBe(false);
  inProgress.socket.write(body.slice('param1=a'.length));
  await inProgress.closed;
  await closing;

  // The request in progress was accepted and stored: its answer names its execution.
  expect(inProgress.received()).toMatch(/^HTTP\/1\.1 200 /);
  expect(inProgress.received()).toMatch(/"executionId":"[0-9a-f-]{36}"/);
  expect(silent.received()).toBe('');
}, 15_000);
