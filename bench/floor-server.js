/**
 * The HTTP side both durable floors share (bench/durable-floor.js: SQLite; bench/pg-floor.js:
 * PostgreSQL): read the form body, turn the request into a JSON item with a time-ordered id, hand
 * the row to `commit`, and answer 200 with the row's id once it resolves (the row is committed).
 * Prints `ready` when it listens; SIGTERM closes it and then runs `stop`.
 */
import http from 'node:http';

export function serveFloor(port, commit, stop) {
  let count = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const now = new Date().toISOString();
      // Time-ordered ids (as hookflow's UUIDv7): rows append to the right edge of the index.
      const id = `${now}-${(++count).toString(36).padStart(8, '0')}-${process.pid}`;
      const body = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString()));
      const trigger = JSON.stringify({ headers: req.headers, params: {}, query: {}, body });
      await commit({ id, trigger, now });
      const out = JSON.stringify({ message: 'Workflow was started', executionId: id });
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(out),
      });
      res.end(out);
    });
  });
  server.keepAliveTimeout = 72_000;
  server.listen(Number(port), '127.0.0.1', () => console.log('ready'));
  process.on('SIGTERM', () => server.close(() => stop().then(() => process.exit(0))));
}
