import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';

function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let data = '';
    socket.on('data', (d) => (data += d));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
  });
}

describe('requests Node cannot parse', () => {
  it('answers with the SPEC error body, never Fastify internals', async () => {
    const server = await startTestServer();
    try {
      const port = Number(new URL(server.url).port);
      const huge = await rawRequest(
        port,
        `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      );
      expect(huge).toMatch(/^HTTP\/1\.1 431/);
      expect(huge).toMatch(/x-request-id: /i);
      expect(JSON.parse(huge.slice(huge.indexOf('\r\n\r\n') + 4))).toMatchObject({
        code: 'headers_too_large',
      });

      const framing = await rawRequest(
        port,
        'POST /webhook/x HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      );
      expect(framing).toMatch(/^HTTP\/1\.1 400/);
      expect(JSON.parse(framing.slice(framing.indexOf('\r\n\r\n') + 4)).code).toBe('invalid_body');
    } finally {
      await server.close();
    }
  });
});

describe('shutdown', () => {
  it('ends open event streams instead of waiting for their clients', async () => {
    const server = await startTestServer();
    const wf = (await server.api('POST', '/api/v1/workflows', { name: 'sse' })).body;
    const res = await fetch(`${server.url}/api/v1/workflows/${wf.id}/test-events/stream`, {
      headers: { authorization: `Bearer ${server.token}` },
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read(); // the stream is open
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    // The client sees the end of the stream.
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
    }
  });
});
