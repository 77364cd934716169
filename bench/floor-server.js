/**
 * The HTTP side of the floors (bench/durable-floor.js: SQLite; bench/pg-floor.js: PostgreSQL).
 *
 * `serveFloor`: read the form body, turn the request into a JSON item with a time-ordered id, hand
 * the row to `commit`, and answer 200 with the row's id once it resolves (the row is committed).
 *
 * `serveContractFloor` (the bench's `contract` case): the same, plus only what SPEC's contract and
 * the security defaults make every accepted request carry, and nothing of hookflow's own code: the
 * URL matched to a trigger's path (one Map lookup), the whole trigger item of SPEC 4 (method, path,
 * params, query, headers, body, files, webhookUrl, executionMode, receivedAt), an execution row
 * with hookflow's columns (a workflow without steps is stored finished), and the answer's headers:
 * X-Request-Id, X-Hookflow-Execution-Id, `nosniff` and the sandbox policy. No limits, validation,
 * metrics, request cap or timeouts. What separates it from the plain floor is what SPEC costs on
 * this machine; what separates hookflow from it is hookflow's own code.
 *
 * A route may also run a workflow (the bench's `flowfloor` case: `benchFlow`, the bench workflow's
 * steps written as plain JavaScript, no expression language, no engine): its execution row is then
 * stored with the step records SPEC 1 lists and the run's times, finished, as hookflow stores a
 * workflow of pure steps run before its commit.
 *
 * `parts` leaves some of SPEC's obligations out, to weigh each (bench/obligations.js): without
 * `answer`, the plain floor's answer headers; without `item`, the plain floor's item; without `row`,
 * the plain floor's row (`{ id, trigger, now }`) instead of hookflow's execution columns.
 *
 * Both print `ready` when they listen; SIGTERM closes the server and then runs `stop`.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';

export function serveFloor(port, commit, stop) {
  let count = 0;
  listen(port, stop, (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const now = new Date().toISOString();
      // Time-ordered ids (as hookflow's UUIDv7): rows append to the right edge of the index.
      const id = `${now}-${(++count).toString(36).padStart(8, '0')}-${process.pid}`;
      const body = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString()));
      const trigger = JSON.stringify({ headers: req.headers, params: {}, query: {}, body });
      await commit({ id, trigger, now });
      answer(res, { 'content-type': 'application/json; charset=utf-8' }, id);
    });
  });
}

/** hookflow's policy for its own webhook answers (src/http/routes/webhooks.ts SANDBOX_OWN). */
const SANDBOX = 'sandbox';
const PREFIX = '/webhook/';

/** SPEC's obligations serveContractFloor can leave out, one by one: all of them by default. */
export const OBLIGATIONS = ['answer', 'item', 'row'];

/**
 * `commit` receives an execution row as hookflow's columns in order (CONTRACT_COLUMNS), or the plain
 * floor's row without `row` in `parts`. `routes`: trigger path → `{ workflowId, run? }`; `run(item)`
 * returns the run's status and step records.
 */
export function serveContractFloor(port, commit, stop, routes, parts = OBLIGATIONS) {
  const [withAnswer, withItem, withRow] = OBLIGATIONS.map((part) => parts.includes(part));
  let count = 0;
  listen(port, stop, (req, res) => {
    const url = req.url;
    const q = url.indexOf('?');
    const path = url.startsWith(PREFIX) ? url.slice(PREFIX.length, q === -1 ? undefined : q) : '';
    const route = routes.get(path);
    if (route === undefined || req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    const requestId = withAnswer ? randomUUID() : undefined;
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const now = new Date().toISOString();
      const id = `${now}-${(++count).toString(36).padStart(8, '0')}-${process.pid}`;
      const body = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString()));
      const item = withItem
        ? {
            method: req.method,
            path,
            params: {},
            query: q === -1 ? {} : Object.fromEntries(new URLSearchParams(url.slice(q + 1))),
            headers: req.headers,
            body,
            files: [],
            webhookUrl: `http://127.0.0.1:${port}${PREFIX}${path}`,
            executionMode: 'production',
            receivedAt: now,
          }
        : { headers: req.headers, params: {}, query: {}, body };
      const trigger = JSON.stringify(item);
      // A workflow without steps is finished as it starts (hookflow: queue/pure-run.ts).
      const startedAt = route.run ? new Date().toISOString() : now;
      const run = route.run?.(item, startedAt);
      // id, workflow_id, workflow_version, mode, status, trigger, steps, error, attempt, retry_of,
      // run_after, locked_until, locked_by, created_at, started_at, finished_at, warnings,
      // resume_state, error_execution_id
      if (!withRow) await commit({ id, trigger, now });
      else
        await commit([
          id,
          route.workflowId,
          1,
          'production',
          run?.status ?? 'succeeded',
          trigger,
          run ? JSON.stringify(run.steps) : '[]',
          null,
          1,
          null,
          now,
          null,
          null,
          now,
          startedAt,
          new Date().toISOString(),
          null,
          null,
          null,
        ]);
      answer(
        res,
        withAnswer
          ? {
              'x-hookflow-execution-id': id,
              'x-request-id': requestId,
              'content-type': 'application/json; charset=utf-8',
              'x-content-type-options': 'nosniff',
              'content-security-policy': SANDBOX,
            }
          : { 'content-type': 'application/json; charset=utf-8' },
        id,
      );
    });
  });
}

/** The bench's workflow case: a realistic small mapping (JSONata in every step). */
export const FLOW_STEPS = [
  {
    name: 'normalise',
    type: 'set',
    fields: {
      customer: '{{ body.param1 }}',
      code: '{{ $uppercase(body.param2) }}',
      source: '{{ $trigger.path }}',
    },
  },
  { name: 'only-a', type: 'filter', condition: '{{ customer = "a" }}' },
  { name: 'label', type: 'set', keepInput: true, fields: { label: '{{ customer & "-" & code }}' } },
];

/**
 * FLOW_STEPS (set → filter → set) as plain JavaScript: the least work that yields its step records
 * (SPEC 1: name, type, status, output, error, startedAt, finishedAt), as hookflow's engine records
 * them (test/bench/flow-floor.test.ts). One clock reading per step boundary: a step finishes when
 * the next one starts.
 */
export function benchFlow(item, startedAt) {
  const normalise = { customer: item.body.param1, code: item.body.param2.toUpperCase(), source: item.path };
  const t1 = new Date().toISOString();
  const steps = [record('normalise', 'set', 'succeeded', normalise, startedAt, t1)];
  const t2 = new Date().toISOString();
  if (normalise.customer !== 'a') {
    steps.push(record('only-a', 'filter', 'filtered', null, t1, t2));
    return { status: 'filtered', steps };
  }
  steps.push(record('only-a', 'filter', 'succeeded', normalise, t1, t2));
  const label = { ...normalise, label: `${normalise.customer}-${normalise.code}` };
  steps.push(record('label', 'set', 'succeeded', label, t2, new Date().toISOString()));
  return { status: 'succeeded', steps };
}

const record = (name, type, status, output, startedAt, finishedAt) => ({
  name,
  type,
  status,
  output,
  error: null,
  startedAt,
  finishedAt,
});

/** hookflow's execution columns, in the order of serveContractFloor's rows. */
export const CONTRACT_COLUMNS = `id text primary key, workflow_id text not null,
  workflow_version integer not null, mode text not null, status text not null, trigger text not null,
  steps text not null, error text, attempt integer default 1 not null, retry_of text,
  run_after text not null, locked_until text, locked_by text, created_at text not null,
  started_at text, finished_at text, warnings text, resume_state text, error_execution_id text`;

/** SPEC's answer of a webhook whose response mode is `immediately`. */
function answer(res, headers, executionId) {
  const out = JSON.stringify({ message: 'Workflow was started', executionId });
  headers['content-length'] = Buffer.byteLength(out);
  res.writeHead(200, headers);
  res.end(out);
}

function listen(port, stop, handler) {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 72_000;
  server.listen(Number(port), '127.0.0.1', () => console.log('ready'));
  process.on('SIGTERM', () => server.close(() => stop().then(() => process.exit(0))));
}
