#!/usr/bin/env node
/**
 * `npm run bench:ab -- <checkout> [<checkout> …]`: hookflow against itself — one checkout's
 * `hookflow start` against another's, on the same machine at the same moments.
 *
 * bench/run.js compares hookflow with floors in its own run; two of its runs, one per checkout,
 * compare two moments of this machine as much as two builds: the same code's req/s moved by up to
 * 1.7× between runs a few minutes apart here, and its floor-relative figures by ±10 %. This runs
 * every checkout's server side by side (each on a fresh data directory, the V8 flags of
 * bin/node-flags.js) and takes the load in slices that alternate between them (in reverse order
 * every other slice), so drift hits each alike. Every slice ends with its server's queue drained,
 * so no server runs its leftovers while another takes its load (two cores are shared). Per case and
 * checkout: accepted req/s, CPU of the server process per request (the executions it runs
 * included, the drain too), p99 (`single`: from one connection, timed per request), the backlog
 * left at the end of a slice and accepted ÷ (load + drain time); and each figure's ratio to the
 * first checkout's.
 *
 *   npm run bench:ab -- [--slices 20] [--seconds 2] [--cases webhook,workflow,routed,single] [--json] . ../hookflow-before
 *
 * Each checkout must be built (`npm run build` there: dist/ and the UI). Checkouts older than this
 * bench are served as they are (their own bin/hookflow.js; the V8 flags given again are harmless).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { NODE_FLAGS } from '../bin/node-flags.js';
import { FLOW_STEPS } from './floor-server.js';
import { processTicks, CLOCK_TICKS } from './lib/cpu.js';
import { countExecutions, drain, load, oneSender } from './lib/load.js';
import {
  cleanup,
  cleanups,
  freePort,
  startChild,
  tokenClient,
  waitForReady,
  serverEnv,
} from './lib/processes.js';
import { log } from './lib/util.js';
import { activeWorkflow, ROUTED_STEPS } from './lib/workflows.js';

const STEPS = { webhook: undefined, workflow: FLOW_STEPS, routed: ROUTED_STEPS, single: undefined };
/** `single`: the webhook case from one connection (bench/run.js's, oneSender: one sender's latency). */
const ONE_SENDER = ['single'];

const { values: opts, positionals: checkouts } = parseArgs({
  options: {
    slices: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '2' },
    cases: { type: 'string', default: 'webhook,workflow,routed,single' },
    connections: { type: 'string', default: '50' },
    json: { type: 'boolean', default: false },
  },
  allowPositionals: true,
  strict: true,
});
const slices = Number(opts.slices);
const seconds = Number(opts.seconds);
const connections = Number(opts.connections);
const cases = opts.cases.split(',');
const problems = [
  ...(checkouts.length < 2 ? ['name two checkouts or more (the first is the baseline)'] : []),
  ...checkouts
    .filter((c) => !fs.existsSync(path.join(c, 'dist/cli.js')))
    .map((c) => `${c} is not a built checkout (no dist/cli.js: run npm run build there)`),
  ...cases
    .filter((c) => !(c in STEPS))
    .map((c) => `--cases: no case ${c} (${Object.keys(STEPS).join(', ')})`),
  ...([slices, seconds, connections].some((n) => !Number.isInteger(n) || n < 1)
    ? ['--slices, --seconds and --connections are whole numbers ≥ 1']
    : []),
];
if (problems.length > 0) {
  for (const p of problems) console.error(`bench:ab: ${p}`);
  process.exit(2);
}

/** One checkout's server, its API and what its slices added up to, per case. */
async function serve(checkout, i) {
  const tree = path.resolve(checkout);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookflow-ab-'));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const env = serverEnv(dataDir, port);
  const label = `${i + 1}:${checkout}`;
  const child = startChild(
    label,
    process.execPath,
    [...NODE_FLAGS, path.join(tree, 'bin/hookflow.js'), 'start'],
    env,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForReady(url, child);
  const api = await tokenClient(url, env, 'bench-ab', tree);
  for (const name of cases)
    await activeWorkflow(api, {
      name: `ab-${name}`,
      trigger: { path: `ab-${name}`, methods: ['POST'] },
      ...(STEPS[name] ? { steps: STEPS[name] } : {}),
    });
  const totals = Object.fromEntries(
    cases.map((c) => [c, { requests: 0, seconds: 0, ticks: 0, backlog: 0, drainMs: 0, p99: [] }]),
  );
  return { label, checkout, child, api, dataDir, url, totals };
}

/** One slice of one case on one server: the load, then the backlog and its drain. */
async function slice(server, name) {
  const before = processTicks(server.child.pid);
  const url = `${server.url}/webhook/ab-${name}`;
  const result = ONE_SENDER.includes(name)
    ? await oneSender(url, seconds)
    : await load(url, seconds, connections);
  const t = server.totals[name];
  t.requests += result['2xx'];
  t.seconds += seconds;
  t.p99.push(result.latency.p99);
  t.backlog += countExecutions(server.dataDir, "status in ('queued', 'running')");
  const drained = await drain(server.api, server.child);
  if (!drained.ok) throw new Error(`${server.label}: the ${name} backlog did not drain`);
  t.drainMs += drained.ms;
  t.ticks += processTicks(server.child.pid) - before;
}

function figures(server) {
  return Object.fromEntries(
    cases.map((name) => {
      const t = server.totals[name];
      const f = {
        reqPerSec: t.requests / t.seconds,
        cpuUsPerRequest: (t.ticks / CLOCK_TICKS / Math.max(1, t.requests)) * 1e6,
        p99Ms: [...t.p99].sort((a, b) => a - b)[Math.floor(t.p99.length / 2)],
      };
      Object.assign(f, {
        backlog: t.backlog / slices,
        acceptedPerSecWithDrain: t.requests / (t.seconds + t.drainMs / 1000),
      });
      return [name, f];
    }),
  );
}

async function main() {
  const servers = [];
  for (const [i, c] of checkouts.entries()) servers.push(await serve(c, i));
  log(`warming up ${servers.length} servers on ${cases.join(', ')}`);
  for (const s of servers)
    for (const name of cases.filter((c) => !ONE_SENDER.includes(c))) {
      await load(`${s.url}/webhook/ab-${name}`, 2, Math.min(connections, 10));
      await drain(s.api, s.child);
    }
  for (let i = 0; i < slices; i++) {
    log(`slice ${i + 1}/${slices}`);
    for (const name of cases)
      for (const s of i % 2 === 0 ? servers : [...servers].reverse()) await slice(s, name);
  }
  const report = servers.map((s) => ({ checkout: s.checkout, cases: figures(s) }));
  const base = report[0].cases;
  for (const r of report)
    for (const name of cases)
      r.cases[name].ratio = Object.fromEntries(
        Object.entries(r.cases[name]).map(([k, v]) => [k, Number((v / base[name][k]).toFixed(3))]),
      );
  if (opts.json) console.log(JSON.stringify({ slices, seconds, connections, report }, null, 2));
  else
    for (const name of cases) {
      console.log(`${name}:`);
      for (const r of report) {
        const f = r.cases[name];
        const line = [
          `${f.reqPerSec.toFixed(0)} req/s (${f.ratio.reqPerSec})`,
          `${f.cpuUsPerRequest.toFixed(1)} µs CPU/request (${f.ratio.cpuUsPerRequest})`,
          `p99 ${Number(f.p99Ms.toFixed(2))} ms`,
          `backlog ${f.backlog.toFixed(0)}`,
          `with drain ${f.acceptedPerSecWithDrain.toFixed(0)}/s (${f.ratio.acceptedPerSecWithDrain})`,
        ];
        console.log(`  ${r.checkout.padEnd(24)} ${line.join(', ')}`);
      }
    }
  return 0;
}

try {
  process.exitCode = await main();
} catch (err) {
  console.error(`bench:ab: ${err.stack ?? err}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
