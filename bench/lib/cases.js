/** The cases: what each one serves, how one run of it is measured, and the soak. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FLOW_STEPS } from '../floor-server.js';
import { connections, opts } from './cli.js';
import { cpuAccount } from './cpu.js';
import {
  countExecutions,
  latencyFigures,
  load,
  loadFigures,
  oneSender,
  pollRss,
  readProcStatus,
} from './load.js';
import { cleanups, freePort, hookflowArgs, startChild, tokenClient, waitForReady } from './processes.js';
import { log, mean, sum } from './util.js';
import { activeWorkflow } from './workflows.js';

// The baseline: the least a receiver can do (read the body, answer 200 with a small JSON body).
export const BARE_SERVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.argv[1]), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/**
 * bare: a node:http server answering 200; durable: bench/durable-floor.js (SQLite); contract: the
 * same with SPEC's obligations (SQLite); flowfloor: the contract floor running the workflow case's
 * steps as plain JavaScript (SQLite); pgfloor: bench/pg-floor.js (--postgres); then hookflow's:
 * webhook (response `immediately`), workflow (set → filter → set), routed (switch + code, issue
 * 18), single (the webhook case from one connection: one sender's latency); last, floor1 (SQLite:
 * the durable floor from one connection). The order of the first slice of each round; the next
 * slices start one case further.
 */
export const FLOOR = opts.postgres ? 'pgfloor' : 'durable';
export const HOOKFLOW_CASES = ['webhook', 'workflow', 'routed', 'single'];
export const CASES = [
  'bare',
  'durable',
  ...(opts.postgres ? ['pgfloor'] : ['contract', 'flowfloor']),
  ...HOOKFLOW_CASES,
  ...(opts.postgres ? [] : ['floor1']),
];
export const ONE_SENDER = ['single', 'floor1'];
/** Cases whose runs are compared with the floor of their round. */
export const TO_FLOOR = ['contract', 'flowfloor', ...HOOKFLOW_CASES];
export const connectionsOf = (name) => (ONE_SENDER.includes(name) ? 1 : connections);

/**
 * One autocannon run against `target`, with the peak RSS of its process meanwhile and the CPU each
 * role spent on it (`cpuAccount`).
 */
export async function measure(name, round, target, seconds, distributed) {
  const rss = pollRss(target.child.pid);
  const cpu = await cpuAccount(name, target, distributed);
  const result = ONE_SENDER.includes(name)
    ? await oneSender(target.url, seconds)
    : await load(target.url, seconds, connectionsOf(name), { timed: true });
  const peakRss = rss.stop();
  return {
    case: name,
    round,
    seconds,
    requests: result.requests.total,
    ...loadFigures(result),
    timeouts: result.timeouts,
    peakRssBytes: peakRss,
    ...(cpu ? { cpu: await cpu.stop(result.requests.total) } : {}),
    // Merged exactly over the slices (mergeSlices), then dropped.
    latencies: result.latencies,
  };
}

/**
 * A round's figures of one case from its slices: rates over the whole time, latency percentiles
 * over every answer of the round, peaks and backlogs the worst slice's, drain times added up, CPU
 * per request weighted by requests.
 */
export function mergeSlices(parts) {
  const requests = sum(parts.map((p) => p.requests));
  const seconds = sum(parts.map((p) => p.seconds));
  const weighted = (value) => sum(parts.map((p) => value(p) * p.requests)) / Math.max(1, requests);
  const latency = latencyFigures(parts.flatMap((p) => p.latencies));
  const run = {
    case: parts[0].case,
    round: parts[0].round,
    slices: parts.length,
    seconds,
    requests,
    requestsPerSec: requests / seconds,
    p50Ms: latency.p50,
    meanMs: latency.mean,
    p99Ms: latency.p99,
    ok2xx: sum(parts.map((p) => p.ok2xx)),
    non2xx: sum(parts.map((p) => p.non2xx)),
    errors: sum(parts.map((p) => p.errors)),
    timeouts: sum(parts.map((p) => p.timeouts)),
    peakRssBytes: Math.max(...parts.map((p) => p.peakRssBytes ?? 0)),
  };
  if (parts[0].cpu) {
    run.cpu = {};
    for (const role of Object.keys(parts[0].cpu))
      run.cpu[role] =
        role === 'machineBusy' ? mean(parts.map((p) => p.cpu[role])) : weighted((p) => p.cpu[role] ?? 0);
  }
  if (parts[0].backlog !== undefined) {
    Object.assign(run, {
      backlog: Math.max(...parts.map((p) => p.backlog)),
      backlogSeconds: Math.max(...parts.map((p) => p.backlog / (p.requests / p.seconds))),
      // What the workers ran while the load lasted (the backlog was empty when each slice began).
      executionsPerSec: sum(parts.map((p) => Math.max(0, p.ok2xx - p.backlog))) / seconds,
      drainMs: sum(parts.map((p) => p.drainMs)),
      drained: parts.every((p) => p.drained),
    });
  }
  return run;
}

/**
 * The workflow case for `seconds` on a fresh `hookflow start` with retention on; RSS sampled every
 * second. Compares the RSS after one minute (the median of 50–70 s) with the RSS at the end (the
 * median of the last 20 s); for soaks under two minutes, the first and the last fifth.
 */
export async function runSoak(baseEnv, seconds) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookflow-soak-'));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const env = {
    HOOKFLOW_EXECUTIONS_MAX_COUNT: '100000',
    ...baseEnv,
    HOOKFLOW_DATA_DIR: dataDir,
    HOOKFLOW_PORT: String(port),
  };
  const hook = startChild('hookflow (soak)', process.execPath, hookflowArgs('start'), env);
  const url = `http://127.0.0.1:${port}`;
  await waitForReady(url, hook);
  const api = await tokenClient(url, env, 'soak');
  await activeWorkflow(api, {
    name: 'soak',
    trigger: { path: 'soak', methods: ['POST'] },
    steps: FLOW_STEPS,
  });
  log(
    `soak: workflow case for ${seconds} s (HOOKFLOW_EXECUTIONS_MAX_COUNT=${env.HOOKFLOW_EXECUTIONS_MAX_COUNT})`,
  );
  const samples = [];
  const started = Date.now();
  const timer = setInterval(() => {
    samples.push({ s: (Date.now() - started) / 1000, rss: readProcStatus(hook.pid, 'VmRSS') ?? 0 });
  }, 1_000);
  const result = await load(`${url}/webhook/soak`, seconds, connections);
  clearInterval(timer);
  const median = (xs) => xs.map((x) => x.rss).sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const window = (from, to) => samples.filter((x) => x.s >= from && x.s < to);
  const [early, late] =
    seconds >= 120
      ? [window(50, 70), window(seconds - 20, seconds + 1)]
      : [window(seconds * 0.2, seconds * 0.4), window(seconds * 0.8, seconds + 1)];
  const backlogNow = countExecutions(dataDir, "status in ('queued', 'running')");
  const kept = countExecutions(dataDir, '1 = 1');
  return {
    seconds,
    ...loadFigures(result),
    rssEarlyBytes: median(early),
    rssEndBytes: median(late),
    growth: median(late) / median(early) - 1,
    peakRssBytes: readProcStatus(hook.pid, 'VmHWM'),
    backlog: backlogNow,
    executionsKept: kept,
    maxCount: Number(env.HOOKFLOW_EXECUTIONS_MAX_COUNT),
    rss: samples.map((x) => [Math.round(x.s), x.rss]),
  };
}
