/**
 * Shared by the engine and executions integration tests: a downstream HTTP service on loopback
 * (for `http` steps to call), and waiting for an execution to finish through the API.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually, type TestServer } from '../helpers/server.js';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export interface Downstream {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/**
 * `/echo` answers `{received: <JSON body>}`; `/slow?ms=N` answers after N ms; `/fail` answers 500.
 */
export async function startDownstream(): Promise<Downstream> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const text = Buffer.concat(chunks).toString('utf8');
      const body = req.headers['content-type']?.includes('json') && text ? JSON.parse(text) : text;
      received.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, body });
      const json = (status: number, value: unknown) => {
        res.statusCode = status;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(value));
      };
      if (url.pathname === '/echo') return json(200, { received: body });
      if (url.pathname === '/slow') {
        setTimeout(() => json(200, { slow: true }), Number(url.searchParams.get('ms') ?? 1000));
        return;
      }
      if (url.pathname === '/fail') return json(500, { error: 'downstream is broken' });
      json(404, { error: 'not found' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const FINAL = new Set(['succeeded', 'failed', 'filtered']);

/** The execution (API JSON) once it reached a final status. */
// biome-ignore lint/suspicious/noExplicitAny: JSON from the API
export async function finishedExecution(server: TestServer, id: string, timeoutMs = 10_000): Promise<any> {
  return eventually(async () => {
    const res = await server.api('GET', `/api/v1/executions/${id}`);
    return res.status === 200 && FINAL.has(res.body.status) ? res.body : undefined;
  }, timeoutMs);
}

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
