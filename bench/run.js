#!/usr/bin/env node
/**
 * `npm run bench`: what does hookflow cost per webhook compared with the cheapest possible receiver?
 *
 * Starts three servers as child processes on loopback — a bare `node:http` server answering 200,
 * the durable floor (bench/durable-floor.js) and `hookflow start` (SQLite in a temp data dir) — and
 * drives them with autocannon (form POSTs `param1=a&param2=b`, 50 connections). A round runs every
 * case for `--duration` seconds, in `--slices` turns (default 5: 2 s each) taken in rotating order,
 * so that the machine's drift hits all cases alike: on this VM the same code's CPU per request
 * varies up to 1.8× within two minutes, and cases run one after the other for 10 s each compared
 * moments of the machine more than the receivers. The cases:
 *   bare      the bare server
 *   durable   the least a receiver that commits each request before answering can do: node:http,
 *             one insert per request on a writer thread, group commit at synchronous=FULL
 *   contract  (SQLite) the durable floor plus only what SPEC's contract makes every accepted request
 *             carry (the whole trigger item, hookflow's execution columns, the answer's headers) and
 *             no hookflow code: bench/durable-floor.js --contract. Not a target: it shows how much of
 *             the gap to the floor SPEC itself costs here, and how much is hookflow's own code
 *   flowfloor (SQLite) the contract floor running the workflow case's steps written as plain
 *             JavaScript (floor-server.js benchFlow), its step records stored with the execution:
 *             the least the workflow case can cost, with no engine and no expression language
 *   pgfloor   (--postgres) the same into PostgreSQL: bench/pg-floor.js
 *   webhook   a production webhook, response mode `immediately` (committed before the answer)
 *   workflow  the same with a three-step workflow (set, filter, set) executed in the same process
 *   routed    the same with a switch whose first case runs a code step (issue 18)
 *   single    the webhook case from one connection: the latency one sender sees, timed per request
 *             (oneSender: autocannon keeps whole milliseconds)
 *   floor1    (SQLite) the durable floor from one connection, timed the same way: the least one
 *             sender can see here (a one-row commit's fsync included)
 * After each slice of a hookflow case it counts the executions not yet run (the backlog, also in
 * seconds of that slice's throughput), then waits for them and times that. Then a 16 MiB upload
 * (multipart, and raw bytes) is sent three times each and the RSS it adds while it is stored is
 * measured. At the end it checks the durability promise: every 2xx hookflow answered has exactly
 * one execution; and it prints the ratios to the bare server and to the floor, and the targets
 * (issue 20: against the floor of the same round).
 *
 * `--soak SECONDS` then runs the workflow case alone for that long on a fresh `hookflow start` with
 * retention on (HOOKFLOW_EXECUTIONS_MAX_COUNT, default 100000 here) and compares its RSS after one
 * minute with its RSS at the end (a leak shows as growth).
 *
 *   npm run bench -- [--duration 10] [--rounds 1] [--slices 5] [--connections 50] [--warmup 2]
 *                    [--soak 300] [--skip-upload] [--json] [--postgres [--webhooks N] [--workers N]]
 *
 * `--json` prints the whole report as one JSON document on stdout (progress goes to stderr).
 *
 * `--postgres` measures distributed mode instead of `hookflow start`: a fresh PostgreSQL database
 * (created on the admin URL HOOKFLOW_BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres,
 * dropped at the end), one `hookflow webhook` process (the one loaded and measured) and one
 * `hookflow worker` process (its peak RSS reported too). `--webhooks N` and `--workers N` start N
 * of each instead (autocannon spreads its connections over the webhook processes), for the
 * capacity model of docs/scaling.md.
 *
 * Each run also reports the CPU it cost per request, read from /proc (Linux): without --postgres,
 * of the process that served the case (all its threads); with --postgres, in each role: the webhook
 * process(es), the worker(s), PostgreSQL (the bench database's backends and the server's own
 * processes) and the load generator, and how many executions the workers finished during the run
 * (executions/s).
 *
 * Exit code 1 when executions and 2xx answers disagree, or when the backlog does not drain. The
 * targets are reported, not enforced: they compare with a bare server on the same machine, whose
 * speed varies with what else runs there.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { FLOW_STEPS } from './floor-server.js';

const root = path.resolve(import.meta.dirname, '..');
const BODY = 'param1=a&param2=b';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
// The backlog of one round is at most duration × throughput; a queue that has not drained in this
// long is reported as a failure rather than waited for.
const DRAIN_LIMIT_MS = 60_000;
const RSS_POLL_MS = 100;
const MiB = 1024 * 1024;
const UPLOAD_BYTES = 16 * MiB;
/** Issue 18's case: one URL routed by an event header (switch), a code step in one branch. */
const ROUTED_STEPS = [
  {
    name: 'route',
    type: 'switch',
    value: '{{ body.param1 }}',
    cases: [
      {
        equals: 'a',
        steps: [{ name: 'total', type: 'code', source: 'return { total: $input.body.param2.length * 2 }' }],
      },
      { equals: 'b', steps: [{ name: 'other', type: 'set', fields: { other: true } }] },
    ],
  },
];
/**
 * Issue 20's targets, against the durable floor measured in the same run: the least a receiver
 * that commits each request before answering can do on this machine (SQLite: bench/durable-floor.js;
 * --postgres: bench/pg-floor.js).
 */
const TARGETS = {
  sqliteWebhookToFloor: 0.9,
  sqliteWorkflowToFloor: 0.75,
  pgWebhookToFloor: 0.7,
  sqliteP99Ms: 25,
  pgP99Ms: 50,
  singleP50Ms: 0.5,
  peakRssBytes: 200 * MiB,
  backlogSeconds: 1,
  uploadFactor: 2,
  soakGrowth: 0.2,
};

// The baseline: the least a receiver can do (read the body, answer 200 with a small JSON body).
const BARE_SERVER = `
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

const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '1' },
    slices: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '2' },
    json: { type: 'boolean', default: false },
    soak: { type: 'string', default: '0' },
    'skip-upload': { type: 'boolean', default: false },
    postgres: { type: 'boolean', default: false },
    webhooks: { type: 'string', default: '1' },
    workers: { type: 'string', default: '1' },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
});
if (opts.help) {
  console.log(
    'Usage: npm run bench -- [--duration SECONDS] [--rounds N] [--slices N] [--connections N] [--warmup SECONDS] [--soak SECONDS] [--skip-upload] [--json] [--postgres [--webhooks N] [--workers N]]',
  );
  process.exit(0);
}
const duration = positiveInt('duration', opts.duration);
const rounds = positiveInt('rounds', opts.rounds);
const slices = positiveInt('slices', opts.slices);
const sliceSeconds = duration / slices;
if (sliceSeconds < 1) usage('--slices must leave each slice at least 1 s of --duration');
const connections = positiveInt('connections', opts.connections);
const warmup = Number(opts.warmup);
const soakSeconds = Number(opts.soak);
const webhookProcesses = positiveInt('webhooks', opts.webhooks);
const workerProcesses = positiveInt('workers', opts.workers);
if ((webhookProcesses > 1 || workerProcesses > 1) && !opts.postgres)
  usage('--webhooks and --workers start distributed mode: add --postgres');
if (!Number.isInteger(soakSeconds) || soakSeconds < 0) usage('--soak must be a whole number of seconds ≥ 0');
if (soakSeconds > 0 && opts.postgres)
  usage('--soak measures `hookflow start` (SQLite); leave out --postgres');
// Warm-up only needs the code paths hot (JIT, SQLite pages), not the full load.
const warmupConnections = Math.min(connections, 10);
if (!Number.isFinite(warmup) || warmup < 0) usage('--warmup must be a number of seconds ≥ 0');

/**
 * bare: a node:http server answering 200; durable: bench/durable-floor.js (SQLite); contract: the
 * same with SPEC's obligations (SQLite); flowfloor: the contract floor running the workflow case's
 * steps as plain JavaScript (SQLite); pgfloor: bench/pg-floor.js (--postgres); then hookflow's:
 * webhook (response `immediately`), workflow (set → filter → set), routed (switch + code, issue
 * 18), single (the webhook case from one connection: one sender's latency); last, floor1 (SQLite:
 * the durable floor from one connection). The order of the first slice of each round; the next
 * slices start one case further.
 */
const FLOOR = opts.postgres ? 'pgfloor' : 'durable';
const HOOKFLOW_CASES = ['webhook', 'workflow', 'routed', 'single'];
const CASES = [
  'bare',
  'durable',
  ...(opts.postgres ? ['pgfloor'] : ['contract', 'flowfloor']),
  ...HOOKFLOW_CASES,
  ...(opts.postgres ? [] : ['floor1']),
];
const ONE_SENDER = ['single', 'floor1'];
/** Cases whose runs are compared with the floor of their round. */
const TO_FLOOR = ['contract', 'flowfloor', ...HOOKFLOW_CASES];
const connectionsOf = (name) => (ONE_SENDER.includes(name) ? 1 : connections);

/** Everything to undo, newest first: child processes, temp dirs. Runs on success, failure and Ctrl-C. */
const cleanups = [];
let cleaning;
function cleanup() {
  cleaning ??= (async () => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        console.error(`bench: cleanup: ${err.message}`);
      }
    }
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`bench: ${signal}, cleaning up`);
    cleanup().finally(() => process.exit(130));
  });
}

const log = (msg) => console.error(`bench: ${msg}`);

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookflow-bench-'));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const [barePort, floorPort, contractPort, hookPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const env = {
    // Tuning variables (HOOKFLOW_SQLITE_SYNCHRONOUS, HOOKFLOW_EXECUTOR_CONCURRENCY …) pass through;
    // where the data lives and how hookflow is reached are the bench's own.
    ...withoutBenchOwnedEnv(process.env),
    HOOKFLOW_DATA_DIR: dataDir,
    HOOKFLOW_PORT: String(hookPort),
    HOOKFLOW_HOST: '127.0.0.1',
    HOOKFLOW_LOG_LEVEL: 'warn',
  };

  log(`starting the bare server on :${barePort} and hookflow on :${hookPort} (data dir ${dataDir})`);
  const bare = startChild('bare', process.execPath, ['-e', BARE_SERVER, String(barePort)], process.env);
  const floor = startChild(
    'durable floor',
    process.execPath,
    [path.join(root, 'bench/durable-floor.js'), String(floorPort), dataDir],
    process.env,
  );
  const contract = opts.postgres
    ? undefined
    : startChild(
        'contract floor',
        process.execPath,
        [path.join(root, 'bench/durable-floor.js'), String(contractPort), dataDir, '--contract'],
        process.env,
      );
  // --postgres: env gains HOOKFLOW_DATABASE_URL; `hook` is the first webhook process (alive = all are).
  const distributed = opts.postgres ? await startDistributed(env) : undefined;
  const pgFloorPort = distributed ? await freePort() : 0;
  const pgFloor = distributed
    ? startChild(
        'PostgreSQL floor',
        process.execPath,
        [path.join(root, 'bench/pg-floor.js'), String(pgFloorPort), env.HOOKFLOW_DATABASE_URL],
        process.env,
      )
    : undefined;
  const hook =
    distributed?.webhook ??
    startChild('hookflow', process.execPath, [path.join(root, 'bin/hookflow.js'), 'start'], env);
  await bare.waitForOutput(/ready/);
  await floor.waitForOutput(/ready/);
  await contract?.waitForOutput(/ready/);
  await pgFloor?.waitForOutput(/ready/);
  const hookUrl = `http://127.0.0.1:${hookPort}`;
  await waitForReady(hookUrl, hook);
  for (const w of distributed?.webhooks.slice(1) ?? []) await waitForReady(w.url, w.child);
  // Every webhook process's URL of a path: autocannon spreads its connections over them.
  const hookUrls = (route) =>
    distributed && distributed.webhooks.length > 1
      ? distributed.webhooks.map((w) => `${w.url}${route}`)
      : `${hookUrl}${route}`;

  const api = await tokenClient(hookUrl, env, 'bench');
  const workflows = {
    webhook: await activeWorkflow(api, { name: 'bench', trigger: { path: 'bench', methods: ['POST'] } }),
    workflow: await activeWorkflow(api, {
      name: 'bench-flow',
      trigger: { path: 'bench-flow', methods: ['POST'] },
      steps: FLOW_STEPS,
    }),
    routed: await activeWorkflow(api, {
      name: 'bench-routed',
      trigger: { path: 'bench-routed', methods: ['POST'] },
      steps: ROUTED_STEPS,
    }),
    upload: await activeWorkflow(api, {
      name: 'bench-upload',
      trigger: { path: 'bench-upload', methods: ['POST'] },
    }),
  };
  const backlog = distributed
    ? () => distributed.countBacklog()
    : () => countExecutions(dataDir, "status in ('queued', 'running')");

  const targets = {
    bare: { url: `http://127.0.0.1:${barePort}/`, child: bare },
    durable: { url: `http://127.0.0.1:${floorPort}/`, child: floor },
    ...(contract
      ? {
          contract: { url: `http://127.0.0.1:${contractPort}/webhook/bench`, child: contract },
          flowfloor: { url: `http://127.0.0.1:${contractPort}/webhook/bench-flow`, child: contract },
        }
      : {}),
    floor1: { url: `http://127.0.0.1:${floorPort}/`, child: floor },
    ...(pgFloor ? { pgfloor: { url: `http://127.0.0.1:${pgFloorPort}/`, child: pgFloor } } : {}),
    webhook: { url: hookUrls('/webhook/bench'), child: hook },
    workflow: { url: hookUrls('/webhook/bench-flow'), child: hook },
    routed: { url: hookUrls('/webhook/bench-routed'), child: hook },
    single: { url: `${hookUrl}/webhook/bench`, child: hook },
  };
  let hookflow2xx = 0;
  if (warmup > 0) {
    log(`warming up every case for ${warmup} s (not in the table)`);
    await load(targets.bare.url, warmup, warmupConnections);
    await load(targets.durable.url, warmup, warmupConnections);
    if (targets.pgfloor) await load(targets.pgfloor.url, warmup, warmupConnections);
    if (targets.contract) await load(targets.contract.url, warmup, warmupConnections);
    if (targets.flowfloor) await load(targets.flowfloor.url, warmup, warmupConnections);
    for (const name of ['webhook', 'workflow', 'routed'])
      hookflow2xx += (await load(targets[name].url, warmup, warmupConnections))['2xx'];
    await drain(api, hook);
  }

  const runs = [];
  for (let round = 1; round <= rounds; round++) {
    const parts = new Map(CASES.map((name) => [name, []]));
    for (let slice = 0; slice < slices; slice++) {
      // Rotated each slice: no case always runs right after the same one.
      for (const name of CASES.map((_, i) => CASES[(i + slice) % CASES.length])) {
        log(
          `round ${round}/${rounds}, slice ${slice + 1}/${slices}: ${name}, ${connectionsOf(name)} connection(s), ${sliceSeconds} s`,
        );
        const run = await measure(name, round, targets[name], sliceSeconds, distributed);
        if (HOOKFLOW_CASES.includes(name)) {
          // Executions accepted but not run yet when the load stopped: the executor's lag.
          run.backlog = await backlog();
          const drained = await drain(api, hook);
          run.drainMs = drained.ms;
          run.drained = drained.ok;
        }
        parts.get(name).push(run);
      }
    }
    for (const name of CASES) {
      const run = mergeSlices(parts.get(name));
      if (HOOKFLOW_CASES.includes(name)) hookflow2xx += run.ok2xx;
      runs.push(run);
    }
  }

  // Peak RSS over each process's whole life so far (kernel high-water mark): the load runs only.
  const hwm = { bare: readProcStatus(bare.pid, 'VmHWM'), hookflow: readProcStatus(hook.pid, 'VmHWM') };
  if (distributed)
    hwm.worker = Math.max(...distributed.workers.map((w) => readProcStatus(w.pid, 'VmHWM') ?? 0));

  let upload;
  if (!opts['skip-upload']) {
    log(
      `uploading ${UPLOAD_BYTES / MiB} MiB once, then three times as multipart and three times as raw bytes`,
    );
    upload = await uploadCost(`${hookUrl}/webhook/bench-upload`, hook.pid);
    hookflow2xx += upload.ok2xx;
    await drain(api, hook);
  }

  let answered2xx = 0;
  for (const url of distributed ? distributed.webhooks.map((w) => w.url) : [hookUrl]) {
    // /metrics needs a token (SPEC 8): the bench's API token will do.
    const metrics = await (
      await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${api.token}` } })
    ).text();
    answered2xx += sumCounter(
      metrics,
      'hookflow_webhook_requests_total',
      (l) => l.mode === 'production' && /^2\d\d$/.test(l.status),
    );
  }
  let executions = 0;
  for (const wf of Object.values(workflows)) {
    executions += distributed
      ? await distributed.countExecutions(wf.id)
      : countExecutions(dataDir, 'workflow_id = ?', wf.id);
  }

  let soak;
  if (soakSeconds > 0) {
    // On a process of its own: retention deletes executions, which the count above must not see.
    await hook.stop();
    soak = await runSoak(env, soakSeconds);
  }

  const report = summarize({ runs, hwm, executions, answered2xx, hookflow2xx, upload, soak });
  if (opts.json) console.log(JSON.stringify(report, null, 2));
  else printReport(report);
  return report.ok ? 0 : 1;
}

async function activeWorkflow(api, body) {
  const wf = await api('POST', '/api/v1/workflows', body);
  await api('POST', `/api/v1/workflows/${wf.id}/activate`);
  return wf;
}

/**
 * One autocannon run against `target`, with the peak RSS of its process meanwhile and the CPU each
 * role spent on it (`cpuAccount`).
 */
async function measure(name, round, target, seconds, distributed) {
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
function mergeSlices(parts) {
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
 * CPU per request of each role during one run, from /proc: user + system time of the processes
 * (all their threads), divided by the requests answered. Without --postgres one role, `server`: the
 * process that served the case (on SQLite the writer thread's commits are in it). With --postgres:
 * `webhook` and `worker` (hookflow's processes; for pgfloor, `floor`: its process), `postgres` (the
 * backends of the bench database that serve this case, by application_name, plus the server's own
 * processes: WAL writer, checkpointer, autovacuum…). Always `loadgen` (this process: autocannon)
 * and `machineBusy`, how busy both CPUs were.
 */
async function cpuAccount(name, target, distributed) {
  const floorCase = name === 'pgfloor';
  const ownProcess = !distributed || name === 'bare' || name === 'durable';
  const roles = ownProcess
    ? { server: [target.child.pid] }
    : floorCase
      ? { floor: [target.child.pid] }
      : {
          webhook: distributed.webhooks.map((w) => w.child.pid),
          worker: distributed.workers.map((w) => w.pid),
        };
  const pgPids = async () => (ownProcess ? [] : await distributed.postgresPids(floorCase));
  const before = { ticks: new Map(), machine: machineTicks(), loadgen: process.cpuUsage() };
  const all = async () => [...Object.values(roles).flat(), ...(await pgPids())];
  for (const pid of await all()) before.ticks.set(pid, processTicks(pid));
  return {
    async stop(requests) {
      const machine = machineTicks();
      const loadgen = process.cpuUsage(before.loadgen);
      const pg = await pgPids();
      const spent = (pids) =>
        sum(pids.map((pid) => Math.max(0, (processTicks(pid) ?? 0) - (before.ticks.get(pid) ?? 0))));
      const out = {};
      const perRequest = (ticks) => (requests > 0 ? ((ticks / CLOCK_TICKS) * 1000) / requests : NaN);
      for (const [role, pids] of Object.entries(roles)) out[role] = perRequest(spent(pids));
      if (pg.length > 0) out.postgres = perRequest(spent(pg));
      out.loadgen = requests > 0 ? (loadgen.user + loadgen.system) / 1000 / requests : NaN;
      out.machineBusy =
        (machine.busy - before.machine.busy) / Math.max(1, machine.total - before.machine.total);
      return out;
    },
  };
}

/** Clock ticks per second of /proc's times (USER_HZ: 100 on Linux). */
const CLOCK_TICKS = 100;

/** utime + stime of a process in clock ticks (undefined when it is gone or not on Linux). */
function processTicks(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** The machine's busy and total clock ticks so far (/proc/stat). */
function machineTicks() {
  try {
    const [, ...v] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    const idle = v[3] + (v[4] ?? 0);
    const total = sum(v.slice(0, 8));
    return { busy: total - idle, total };
  } catch {
    return { busy: NaN, total: NaN };
  }
}

// ---------------------------------------------------------------------------------------------------
// Load and measurements

/**
 * An autocannon run. `timed`: every answer's latency is kept too (autocannon's own percentiles are
 * whole milliseconds), as `result.latencies`, so that the slices of a round give exact percentiles
 * together (mergeSlices).
 */
async function load(url, seconds, conns, { timed = false } = {}) {
  const run = autocannon({
    url,
    method: 'POST',
    headers: FORM,
    body: BODY,
    connections: conns,
    duration: seconds,
  });
  const latencies = [];
  if (timed) run.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  const result = await run;
  return timed ? { ...result, latency: latencyFigures(latencies), latencies } : result;
}

/**
 * The `single` case: one sender on one keep-alive connection, each request sent when the previous
 * answer is in, its latency timed with performance.now(). Not autocannon: its latency histogram
 * keeps whole milliseconds (hdr-histogram, lowest discernible value 1 ms), so below 1 ms its p50
 * is 0 and its mean only the share of answers that took 1 ms or more (0.03 "ms" for answers of
 * ~0.4 ms). A plain socket rather than node:http's client, whose own ~50 µs a request would count
 * as the server's. Returns what `loadFigures` reads of an autocannon result.
 */
function oneSender(url, seconds) {
  const { hostname, port, pathname } = new URL(url);
  const request = Buffer.from(
    `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: ${FORM['content-type']}\r\n` +
      `Content-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`,
  );
  const latencies = [];
  const counts = { ok: 0, non2xx: 0 };
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    socket.setNoDelay(true);
    const deadline = performance.now() + seconds * 1000;
    let pending = Buffer.alloc(0);
    let sentAt = 0;
    const send = () => {
      sentAt = performance.now();
      socket.write(request);
    };
    socket.on('connect', send);
    socket.on('error', reject);
    // The server may close the connection (a refusal with `connection: close`): the run ends there.
    socket.on('close', () => resolve(senderResult(latencies, counts, seconds)));
    socket.on('data', (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const headEnd = pending.indexOf('\r\n\r\n');
      if (headEnd === -1) return;
      const head = pending.subarray(0, headEnd).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (pending.length < headEnd + 4 + length) return;
      const now = performance.now();
      latencies.push(now - sentAt);
      if (/^HTTP\/1\.1 2\d\d /.test(head)) counts.ok++;
      else counts.non2xx++;
      pending = pending.subarray(headEnd + 4 + length);
      if (now < deadline) send();
      else socket.end();
    });
  });
}

/** `oneSender`'s figures in the shape of an autocannon result (milliseconds with decimals). */
function senderResult(latencies, { ok, non2xx }, seconds) {
  return {
    requests: { average: latencies.length / seconds, total: latencies.length },
    latency: latencyFigures(latencies),
    latencies,
    '2xx': ok,
    non2xx,
    errors: 0,
    timeouts: 0,
  };
}

/** p50, p99 and mean of latencies in milliseconds. */
function latencyFigures(latencies) {
  const sorted = Float64Array.from(latencies).sort();
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), mean: mean(latencies) };
}

/** What the report keeps of an autocannon result. */
function loadFigures(result) {
  return {
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    // autocannon's own are whole milliseconds (`load` with `timed`, and `oneSender`, are not).
    meanMs: result.latency.mean,
    p99Ms: result.latency.p99,
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** Waits until no execution is queued or running; returns how long that took. */
async function drain(api, child) {
  const started = Date.now();
  for (;;) {
    child.assertAlive();
    const [queued, running] = await Promise.all([
      api('GET', '/api/v1/executions?status=queued&limit=1'),
      api('GET', '/api/v1/executions?status=running&limit=1'),
    ]);
    if (queued.items.length === 0 && running.items.length === 0)
      return { ok: true, ms: Date.now() - started };
    if (Date.now() - started > DRAIN_LIMIT_MS) return { ok: false, ms: Date.now() - started };
    await sleep(50);
  }
}

/** Samples VmRSS while a run lasts (the kernel's VmHWM only knows the peak over the whole life). */
function pollRss(pid) {
  let peak = readProcStatus(pid, 'VmRSS') ?? 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, readProcStatus(pid, 'VmRSS') ?? 0);
  }, RSS_POLL_MS);
  return {
    stop() {
      clearInterval(timer);
      const last = readProcStatus(pid, 'VmRSS');
      return last === undefined && peak === 0 ? undefined : Math.max(peak, last ?? 0);
    },
  };
}

/** A field of /proc/<pid>/status in bytes (Linux only; undefined elsewhere). */
function readProcStatus(pid, field) {
  try {
    const m = fs
      .readFileSync(`/proc/${pid}/status`, 'utf8')
      .match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined; // not Linux, or the process is gone
  }
}

/** Sum of a Prometheus counter's samples whose labels pass `keep`. */
function sumCounter(text, name, keep) {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const m = line.match(/^[^{]+\{([^}]*)\}\s+(\S+)/);
    if (!m) continue;
    const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (keep(labels)) sum += Number(m[2]);
  }
  return sum;
}

/** Counted in the SQLite file itself: the API pages executions 200 at a time, too slow for ~10⁵ rows. */
function countExecutions(dataDir, where, ...params) {
  const db = new Database(path.join(dataDir, 'hookflow.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT count(*) AS n FROM executions WHERE ${where}`).get(...params).n;
  } finally {
    db.close();
  }
}

/**
 * What a 16 MiB upload costs in memory while it is stored: the peak RSS of hookflow during the
 * request minus its RSS just before, sampled every 5 ms; the largest of three tries per kind. The
 * first upload of a process is reported apart: it also grows the allocator once (glibc serves big
 * buffers from mmap until the first is freed, then from its heap, which keeps the pages): ~36 MB
 * here, whichever kind comes first.
 */
async function uploadCost(url, pid) {
  const data = Buffer.alloc(UPLOAD_BYTES - 4096, 'x');
  const boundary = 'hookflow-bench-boundary';
  const multipart = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const kinds = {
    multipart: { body: multipart, type: `multipart/form-data; boundary=${boundary}` },
    raw: { body: Buffer.alloc(UPLOAD_BYTES, 'y'), type: 'application/octet-stream' },
  };
  const out = { sizeBytes: UPLOAD_BYTES, ok2xx: 0 };
  const send = async (kind) => {
    const { body, type } = kinds[kind];
    await sleep(300);
    const before = readProcStatus(pid, 'VmRSS') ?? 0;
    let peak = before;
    const timer = setInterval(() => {
      peak = Math.max(peak, readProcStatus(pid, 'VmRSS') ?? 0);
    }, 5);
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': type }, body });
    await res.arrayBuffer();
    clearInterval(timer);
    peak = Math.max(peak, readProcStatus(pid, 'VmRSS') ?? 0);
    if (!res.ok) throw new Error(`upload (${kind}) answered ${res.status}`);
    out.ok2xx++;
    return peak - before;
  };
  const first = await send('raw');
  out.first = { addedRssBytes: first, factor: first / UPLOAD_BYTES };
  for (const kind of Object.keys(kinds)) {
    let worst = 0;
    for (let i = 0; i < 3; i++) worst = Math.max(worst, await send(kind));
    out[kind] = { addedRssBytes: worst, factor: worst / UPLOAD_BYTES };
  }
  return out;
}

/**
 * The workflow case for `seconds` on a fresh `hookflow start` with retention on; RSS sampled every
 * second. Compares the RSS after one minute (the median of 50–70 s) with the RSS at the end (the
 * median of the last 20 s); for soaks under two minutes, the first and the last fifth.
 */
async function runSoak(baseEnv, seconds) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookflow-soak-'));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const env = {
    HOOKFLOW_EXECUTIONS_MAX_COUNT: '100000',
    ...baseEnv,
    HOOKFLOW_DATA_DIR: dataDir,
    HOOKFLOW_PORT: String(port),
  };
  const hook = startChild(
    'hookflow (soak)',
    process.execPath,
    [path.join(root, 'bin/hookflow.js'), 'start'],
    env,
  );
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

// ---------------------------------------------------------------------------------------------------
// Report

function summarize({ runs, hwm, executions, answered2xx, hookflow2xx, upload, soak }) {
  const of = (name) => runs.filter((r) => r.case === name);
  const cases = {};
  for (const name of CASES) {
    const rs = of(name);
    cases[name] = {
      requestsPerSec: mean(rs.map((r) => r.requestsPerSec)),
      p50Ms: mean(rs.map((r) => r.p50Ms)),
      worstP50Ms: Math.max(...rs.map((r) => r.p50Ms)),
      meanMs: mean(rs.map((r) => r.meanMs)),
      p99Ms: Math.max(...rs.map((r) => r.p99Ms)),
      non2xx: sum(rs.map((r) => r.non2xx)),
      errors: sum(rs.map((r) => r.errors + r.timeouts)),
      peakRssBytes: Math.max(...rs.map((r) => r.peakRssBytes ?? 0)),
    };
    // CPU of the serving process per request over all rounds (without --postgres: cpuAccount).
    if (rs[0].cpu.server !== undefined)
      cases[name].serverCpuMs =
        sum(rs.map((r) => r.cpu.server * r.requests)) / sum(rs.map((r) => r.requests));
    if (name !== 'bare') cases[name].ratio = cases[name].requestsPerSec / cases.bare.requestsPerSec;
    if (TO_FLOOR.includes(name)) {
      Object.assign(cases[name], {
        ratioToFloor: cases[name].requestsPerSec / cases[FLOOR].requestsPerSec,
        // The worst round's ratio: a target holds in every round, not on average.
        worstRatioToFloor: Math.min(...rs.map((r) => r.requestsPerSec / floorOfRound(runs, r.round))),
      });
    }
    if (HOOKFLOW_CASES.includes(name)) {
      Object.assign(cases[name], {
        backlog: Math.max(...rs.map((r) => r.backlog)),
        backlogSeconds: Math.max(...rs.map((r) => r.backlogSeconds)),
        drainMs: Math.max(...rs.map((r) => r.drainMs)),
      });
    }
  }
  const drains = runs.filter((r) => r.drainMs !== undefined);
  // autocannon stops at the deadline with up to one request per connection in flight. hookflow may
  // have accepted those: answered (counted in its metrics, never seen by autocannon), or, when the
  // socket closed before the answer was written, not counted in its metrics at all. Either way the
  // execution exists, rightly: acceptance is decided at commit. So executions may exceed the 2xx
  // counts by at most the requests in flight at the ends of runs; fewer executions than 2xx answers
  // means accepted work was lost.
  const inFlight = executions - hookflow2xx;
  const unanswered = executions - answered2xx;
  const perRound = HOOKFLOW_CASES.reduce((n, name) => n + connectionsOf(name), 0);
  const maxInFlight = (warmup > 0 ? 3 * warmupConnections : 0) + 2 * perRound * rounds * slices;
  const problems = [];
  if (executions < answered2xx) {
    problems.push(
      `${answered2xx - executions} requests answered 2xx have NO execution (accepted work was lost)`,
    );
  }
  if (executions < hookflow2xx) {
    problems.push(
      `${hookflow2xx - executions} 2xx responses seen by autocannon have NO execution (accepted work was lost)`,
    );
  }
  if (inFlight > maxInFlight) {
    problems.push(
      `${inFlight} more executions than 2xx responses seen by autocannon: more than the ${maxInFlight} requests that can be in flight when runs stop`,
    );
  }
  if (drains.some((r) => !r.drained))
    problems.push(`the backlog did not drain within ${DRAIN_LIMIT_MS / 1000} s`);

  const peakUnderLoad = Math.max(...HOOKFLOW_CASES.map((name) => cases[name].peakRssBytes));
  const t = TARGETS;
  const floorName = opts.postgres ? 'PostgreSQL floor' : 'durable floor';
  const p99Ms = opts.postgres ? t.pgP99Ms : t.sqliteP99Ms;
  const targets = [
    target(
      `webhook req/s ÷ ${floorName} (worst round)`,
      cases.webhook.worstRatioToFloor,
      `≥ ${opts.postgres ? t.pgWebhookToFloor : t.sqliteWebhookToFloor}`,
      cases.webhook.worstRatioToFloor >= (opts.postgres ? t.pgWebhookToFloor : t.sqliteWebhookToFloor),
    ),
    target('webhook p99 (worst round)', cases.webhook.p99Ms, `< ${p99Ms} ms`, cases.webhook.p99Ms < p99Ms),
    noFailures('webhook non-2xx', cases.webhook),
  ];
  if (!opts.postgres) {
    targets.push(
      target(
        `workflow req/s ÷ ${floorName} (worst round)`,
        cases.workflow.worstRatioToFloor,
        `≥ ${t.sqliteWorkflowToFloor}`,
        cases.workflow.worstRatioToFloor >= t.sqliteWorkflowToFloor,
      ),
      // Timed per request by `oneSender`, not autocannon (whole milliseconds): the worst round's.
      target(
        'one sender: webhook p50 latency at 1 connection (worst round)',
        cases.single.worstP50Ms,
        `< ${t.singleP50Ms} ms`,
        cases.single.worstP50Ms < t.singleP50Ms,
      ),
    );
  }
  targets.push(
    target('workflow p99 (worst round)', cases.workflow.p99Ms, `< ${p99Ms} ms`, cases.workflow.p99Ms < p99Ms),
    target(
      'workflow backlog at the end (worst round)',
      cases.workflow.backlogSeconds,
      `< ${t.backlogSeconds} s of throughput`,
      cases.workflow.backlogSeconds < t.backlogSeconds,
    ),
    noFailures('workflow non-2xx', cases.workflow),
    noFailures('routed (switch + code) non-2xx', cases.routed),
    target(
      'peak RSS under load',
      peakUnderLoad,
      `≤ ${t.peakRssBytes / MiB} MB`,
      peakUnderLoad <= t.peakRssBytes,
    ),
  );
  if (upload) {
    for (const kind of ['multipart', 'raw']) {
      targets.push(
        target(
          `${UPLOAD_BYTES / MiB} MiB upload (${kind}): RSS added`,
          upload[kind].factor,
          `≤ ~${t.uploadFactor}× its size`,
          upload[kind].factor <= t.uploadFactor,
        ),
      );
    }
  }
  if (soak) {
    targets.push(
      target(
        `soak ${soak.seconds} s: RSS growth after the first minute`,
        soak.growth,
        `≤ ${t.soakGrowth * 100} %`,
        soak.growth <= t.soakGrowth,
      ),
      target(
        'soak: executions kept (retention)',
        soak.executionsKept,
        `≤ ${soak.maxCount} + one sweep`,
        soak.executionsKept <= soak.maxCount * 1.25,
      ),
      target(
        'soak: peak RSS',
        soak.peakRssBytes,
        `≤ ${t.peakRssBytes / MiB} MB`,
        soak.peakRssBytes <= t.peakRssBytes,
      ),
      noFailures('soak: non-2xx', soak),
    );
  }
  return {
    config: {
      durationSeconds: duration,
      rounds,
      slices,
      connections,
      warmupSeconds: warmup,
      soakSeconds,
      body: BODY,
      workflowSteps: FLOW_STEPS,
      routedSteps: ROUTED_STEPS,
      node: process.version,
      cpus: os.availableParallelism(),
      store: opts.postgres
        ? `postgres (${webhookProcesses} webhook + ${workerProcesses} worker process(es))`
        : 'sqlite (hookflow start)',
      hookflowEnv: tuning(),
    },
    runs,
    cases,
    ratio: {
      webhook: cases.webhook.ratio,
      workflow: cases.workflow.ratio,
      durable: cases.durable.ratio,
      floor: FLOOR,
      floorToBare: cases[FLOOR].ratio,
      webhookToFloor: cases.webhook.ratioToFloor,
      workflowToFloor: cases.workflow.ratioToFloor,
      routedToFloor: cases.routed.ratioToFloor,
      ...(cases.contract
        ? {
            contractToFloor: cases.contract.ratioToFloor,
            worstContractToFloor: cases.contract.worstRatioToFloor,
            webhookToContract: cases.webhook.requestsPerSec / cases.contract.requestsPerSec,
            flowFloorToFloor: cases.flowfloor.ratioToFloor,
            worstFlowFloorToFloor: cases.flowfloor.worstRatioToFloor,
            workflowToFlowFloor: cases.workflow.requestsPerSec / cases.flowfloor.requestsPerSec,
          }
        : {}),
      webhookP99: cases.webhook.p99Ms / cases.bare.p99Ms,
      peakRss: (hwm.hookflow ?? NaN) / (hwm.bare ?? NaN),
    },
    peakRssBytes: { ...hwm, hookflowUnderLoad: peakUnderLoad },
    upload,
    soak,
    targets,
    targetsMet: targets.every((x) => x.met),
    executions: {
      count: executions,
      answered2xx,
      seenByAutocannon2xx: hookflow2xx,
      inFlightAtStop: inFlight,
      acceptedButUnanswered: unanswered,
    },
    problems,
    ok: problems.length === 0,
  };
}

/** The floor's run of `round` (each hookflow run is compared with the floor of its own round). */
function floorRun(runs, round) {
  return runs.find((r) => r.case === FLOOR && r.round === round);
}

/** The floor's req/s in `round`. */
function floorOfRound(runs, round) {
  return floorRun(runs, round).requestsPerSec;
}

function target(name, value, wanted, met) {
  return { name, value, wanted, met };
}

/** The target that a case (or the soak) had no non-2xx answers and no errors. */
function noFailures(name, { non2xx, errors }) {
  return target(name, non2xx + errors, '0', non2xx + errors === 0);
}

function printReport(r) {
  const { config: c } = r;
  const rows = [
    [
      'case',
      'round',
      'conns',
      'req/s',
      'p50',
      'p99',
      'non-2xx',
      'errors',
      'peak RSS',
      '÷ bare',
      '÷ floor',
      'backlog',
    ],
  ];
  // Each run against the bare server of its own round: the machine's speed drifts between rounds.
  const bare = new Map(
    r.runs.filter((run) => run.case === 'bare').map((run) => [run.round, run.requestsPerSec]),
  );
  for (const run of r.runs) {
    const toFloor = TO_FLOOR.includes(run.case)
      ? `${(run.requestsPerSec / floorOfRound(r.runs, run.round)).toFixed(2)}×`
      : '';
    rows.push([
      run.case,
      String(run.round),
      String(connectionsOf(run.case)),
      num(run.requestsPerSec),
      ms(run.p50Ms),
      ms(run.p99Ms),
      num(run.non2xx),
      num(run.errors),
      mb(run.peakRssBytes),
      run.case === 'bare' ? '' : `${(run.requestsPerSec / bare.get(run.round)).toFixed(2)}×`,
      toFloor,
      run.backlog === undefined ? '' : `${num(run.backlog)} (${run.backlogSeconds.toFixed(2)} s)`,
    ]);
  }
  const settings = Object.entries(c.hookflowEnv).map(([k, v]) => `${k}=${v}`);
  console.log(
    `\nhookflow bench — ${c.connections} connections, ${c.durationSeconds} s × ${c.rounds} round(s) (each case in ${c.slices} slice(s) of ${c.durationSeconds / c.slices} s, in turn), form POST ${c.body}, node ${c.node}, ${c.cpus} CPUs`,
  );
  if (opts.postgres) {
    console.log(
      `hookflow: PostgreSQL, ${webhookProcesses} \`hookflow webhook\` (measured) + ${workerProcesses} \`hookflow worker\` process(es)${settings.length > 0 ? `; ${settings.join(' ')}` : ''}`,
    );
  } else {
    console.log(
      `hookflow settings: ${settings.length > 0 ? settings.join(' ') : 'defaults (SQLite, synchronous FULL)'}`,
    );
  }
  console.log(
    "cases: durable = node:http + one insert per request, committed (SQLite, FULL) before the answer; contract = the same carrying what SPEC's contract asks of each accepted request (item, execution row, headers), no hookflow code; flowfloor = contract running the workflow case's steps as plain JavaScript, records stored; pgfloor = the same into PostgreSQL, one multi-row INSERT per batch over 2 connections (--postgres); webhook = production webhook, response `immediately`; workflow = the same with set → filter → set; routed = switch + code; single = webhook from 1 connection; floor1 = durable from 1 connection; ÷ floor = against the floor of the same round (pgfloor with --postgres)\n",
  );
  console.log(table(rows));
  const cpuRuns = r.runs.filter(
    (run) => opts.postgres && run.cpu && run.case !== 'bare' && run.case !== 'durable',
  );
  if (!opts.postgres) {
    // The cost of each request to the machine, which throughput follows here (the load generator
    // takes one of the two CPUs): steadier than req/s, which moves with the machine's speed.
    const cpuRows = [['case', 'round', 'server µs', '÷ floor', 'loadgen µs', 'machine busy']];
    // Not routed: most of its code steps run after its slice (the backlog), unmeasured.
    for (const run of r.runs.filter((x) => x.case !== 'bare' && x.case !== 'routed')) {
      const floorCpu = floorRun(r.runs, run.round).cpu.server;
      cpuRows.push([
        run.case,
        String(run.round),
        (run.cpu.server * 1000).toFixed(1),
        `${(run.cpu.server / floorCpu).toFixed(2)}×`,
        (run.cpu.loadgen * 1000).toFixed(1),
        `${Math.round(run.cpu.machineBusy * 100)} %`,
      ]);
    }
    console.log('\nCPU per request (/proc; server = every thread of the process that served the case):');
    console.log(table(cpuRows));
  }
  if (cpuRuns.length > 0) {
    const cpuMs = (v) => (v === undefined || !Number.isFinite(v) ? '' : `${v.toFixed(3)}`);
    const cpuRows = [
      [
        'case',
        'round',
        'webhook/floor',
        'worker',
        'postgres',
        'loadgen',
        'all',
        'machine busy',
        'executions/s',
      ],
    ];
    for (const run of cpuRuns) {
      const c = run.cpu;
      const front = c.webhook ?? c.floor;
      cpuRows.push([
        run.case,
        String(run.round),
        cpuMs(front),
        cpuMs(c.worker),
        cpuMs(c.postgres),
        cpuMs(c.loadgen),
        cpuMs(front + (c.worker ?? 0) + (c.postgres ?? 0) + c.loadgen),
        `${Math.round(c.machineBusy * 100)} %`,
        run.executionsPerSec === undefined ? '' : num(run.executionsPerSec),
      ]);
    }
    console.log(
      "\nCPU ms per request, by role (/proc; postgres = the case's backends + the server's own processes):",
    );
    console.log(table(cpuRows));
  }
  console.log(
    `\nratios to bare: webhook ${x(r.ratio.webhook)}, workflow ${x(r.ratio.workflow)}; ` +
      `peak RSS ${mb(r.peakRssBytes.hookflowUnderLoad)} under load (${mb(r.peakRssBytes.hookflow)} vs ${mb(r.peakRssBytes.bare)} over the whole runs)`,
  );
  console.log(
    `the ${r.ratio.floor} floor does ${x(r.ratio.floorToBare)} of bare; hookflow does ${x(r.ratio.webhookToFloor)} (webhook), ${x(r.ratio.workflowToFloor)} (workflow) and ${x(r.ratio.routedToFloor)} (routed) of it (means over rounds)`,
  );
  if (r.ratio.contractToFloor !== undefined)
    console.log(
      `the contract floor (SPEC's obligations, no hookflow code) does ${x(r.ratio.contractToFloor)} of the durable floor (worst round ${x(r.ratio.worstContractToFloor)}); hookflow's webhook does ${x(r.ratio.webhookToContract)} of the contract floor`,
    );
  if (r.ratio.flowFloorToFloor !== undefined)
    console.log(
      `the flow floor (the contract floor running the workflow's steps as plain JavaScript) does ${x(r.ratio.flowFloorToFloor)} of the durable floor (worst round ${x(r.ratio.worstFlowFloorToFloor)}); hookflow's workflow does ${x(r.ratio.workflowToFlowFloor)} of the flow floor`,
    );
  if (!opts.postgres) {
    const floorCpu = r.cases[FLOOR].serverCpuMs;
    const more = (name) =>
      `${name} ${(r.cases[name].serverCpuMs * 1000).toFixed(1)} µs (${r.cases[name].serverCpuMs >= floorCpu ? '+' : ''}${Math.round((r.cases[name].serverCpuMs / floorCpu - 1) * 100)} %)`;
    console.log(
      `CPU per request over all rounds: durable floor ${(floorCpu * 1000).toFixed(1)} µs; ${['contract', 'flowfloor', 'webhook', 'workflow'].map(more).join('; ')}`,
    );
  }
  if (r.cases.floor1) {
    const p50s = (name) =>
      r.runs
        .filter((run) => run.case === name)
        .map((run) => run.p50Ms.toFixed(3))
        .join(' / ');
    console.log(
      `one sender, p50 by round: hookflow ${p50s('single')} ms; the durable floor ${p50s('floor1')} ms (the least one sender can see here)`,
    );
  }
  if (r.peakRssBytes.worker !== undefined)
    console.log(`peak RSS of the worker process: ${mb(r.peakRssBytes.worker)}`);
  const drains = r.runs.filter((run) => run.drainMs !== undefined);
  console.log(
    `backlog drain in each hookflow round (its slices added up): ${drains.map((d) => `${d.case} ${(d.drainMs / 1000).toFixed(1)} s`).join(', ')}`,
  );
  if (r.upload) {
    const u = r.upload;
    console.log(
      `${u.sizeBytes / MiB} MiB upload, RSS added while stored: multipart ${mb(u.multipart.addedRssBytes)} (${x(u.multipart.factor)}), raw ${mb(u.raw.addedRssBytes)} (${x(u.raw.factor)}); ` +
        `the first upload of the process ${mb(u.first.addedRssBytes)} (${x(u.first.factor)}, one-time allocator growth included)`,
    );
  }
  if (r.soak) {
    const k = r.soak;
    console.log(
      `soak ${k.seconds} s (workflow case): ${num(k.requestsPerSec)} req/s, p99 ${k.p99Ms} ms, non-2xx ${num(k.non2xx)}; ` +
        `RSS ${mb(k.rssEarlyBytes)} after the first minute → ${mb(k.rssEndBytes)} at the end (${(k.growth * 100).toFixed(1)} %), peak ${mb(k.peakRssBytes)}; ` +
        `executions kept ${num(k.executionsKept)} (max count ${num(k.maxCount)}), backlog ${num(k.backlog)}`,
    );
  }
  const e = r.executions;
  if (r.ok) {
    const gone =
      e.acceptedButUnanswered > 0
        ? ` (${num(e.acceptedButUnanswered)} of them hung up before the answer)`
        : '';
    console.log(
      `executions: ${num(e.count)} ✓ = ${num(e.seenByAutocannon2xx)} 2xx seen by autocannon + ${num(e.inFlightAtStop)} accepted while in flight when runs stopped${gone}; hookflow answered ${num(e.answered2xx)} 2xx`,
    );
  } else {
    console.log(
      `executions: ${num(e.count)}, requests answered 2xx: ${num(e.answered2xx)}, seen by autocannon: ${num(e.seenByAutocannon2xx)}`,
    );
    console.log(`\n!!! MISMATCH !!!\n${r.problems.map((p) => `!!! ${p}`).join('\n')}\n`);
  }
  console.log('\ntargets (issue 20):');
  for (const t of r.targets) {
    const value =
      typeof t.value !== 'number'
        ? String(t.value)
        : t.name.includes('RSS') && !t.name.includes('growth') && !t.name.includes('upload')
          ? mb(t.value)
          : t.name.includes('÷') || t.name.includes('upload')
            ? x(t.value)
            : t.name.includes('growth')
              ? `${(t.value * 100).toFixed(1)} %`
              : t.name.includes('backlog')
                ? `${t.value.toFixed(2)} s`
                : t.name.includes('p99') || t.name.includes('latency')
                  ? `${Number(t.value.toFixed(3))} ms`
                  : num(t.value);
    console.log(`  ${t.met ? '✓' : '✗'} ${t.name}: ${value} (target ${t.wanted})`);
  }
  console.log('');
}

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('   '))
    .join('\n');
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const mean = (xs) => sum(xs) / xs.length;
const x = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : 'n/a');
const num = (n) => Math.round(n).toLocaleString('en-US');
// Whole milliseconds from autocannon alone (the soak); timed runs have decimals.
const ms = (n) => (Number.isInteger(n) ? `${n} ms` : `${n.toFixed(n >= 10 ? 1 : n >= 1 ? 2 : 3)} ms`);
const mb = (bytes) => (bytes === undefined ? 'n/a' : `${Math.round(bytes / 1024 / 1024)} MB`);

// ---------------------------------------------------------------------------------------------------
// Processes and plumbing

function startChild(name, command, args, env) {
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  // Kept for the error message if the child dies; not printed otherwise.
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk).slice(-8_000);
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  let exit;
  child.once('exit', (code, signal) => {
    exit = { code, signal };
  });
  cleanups.push(() => stopChild(child));
  return {
    pid: child.pid,
    stop: () => stopChild(child),
    assertAlive() {
      if (exit) throw new Error(`${name} exited (${exit.signal ?? exit.code}):\n${output}`);
    },
    async waitForOutput(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(output)) {
        this.assertAlive();
        if (Date.now() > deadline)
          throw new Error(`${name} did not print ${pattern} within ${timeoutMs} ms:\n${output}`);
        await sleep(20);
      }
    },
  };
}

/** SIGTERM (hookflow drains and closes its store), then SIGKILL if it takes longer than 10 s. */
async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function waitForReady(url, child) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    child.assertAlive();
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`hookflow was not ready at ${url} within 30 s`);
    await sleep(50);
  }
}

/** An API client with a new token, made by `hookflow tokens create` on the store `env` points at. */
async function tokenClient(base, env, name) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(root, 'bin/hookflow.js'), 'tokens', 'create', '--name', name],
    { env, cwd: root },
  );
  return apiClient(base, stdout.trim().split('\n').at(-1));
}

/** A function calling the API with `token` (kept as its `token` property, for /metrics). */
function apiClient(base, token) {
  const client = async (method, route, body) => {
    const res = await fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  client.token = token;
  return client;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const BENCH_OWNED_ENV = [
  'HOOKFLOW_DATA_DIR',
  'HOOKFLOW_DATABASE_URL',
  'HOOKFLOW_PORT',
  'HOOKFLOW_HOST',
  'HOOKFLOW_BASE_URL',
  'HOOKFLOW_LOG_LEVEL',
];

function withoutBenchOwnedEnv(env) {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !BENCH_OWNED_ENV.includes(k)));
}

/** The HOOKFLOW_* settings passed through to hookflow, for the report header. */
function tuning() {
  return Object.fromEntries(
    Object.entries(withoutBenchOwnedEnv(process.env)).filter(([k]) => k.startsWith('HOOKFLOW_')),
  );
}

function positiveInt(name, raw) {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) usage(`--${name} must be a whole number ≥ 1`);
  return n;
}

function usage(message) {
  console.error(`bench: ${message}`);
  process.exit(2);
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

// ---------------------------------------------------------------------------------------------------
// --postgres: distributed mode

/**
 * Creates a fresh database, points `env` at it and starts `--webhooks` × `hookflow webhook` (the
 * first on HOOKFLOW_PORT) and `--workers` × `hookflow worker`. The first webhook child's
 * assertAlive checks every other process too, so a dead worker fails the drain instead of hanging it.
 */
async function startDistributed(env) {
  const { default: pg } = await import('pg');
  const adminUrl = process.env.HOOKFLOW_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `hookflow_bench_${Date.now().toString(36)}_${process.pid}`;
  const admin = async (sql) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  cleanups.push(() => admin(`drop database if exists ${name} with (force)`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  env.HOOKFLOW_DATABASE_URL = url.toString();
  env.HOOKFLOW_ENCRYPTION_KEY ??= 'hookflow-bench-encryption-key-0123456789';
  log(`PostgreSQL database ${name}: ${webhookProcesses} webhook and ${workerProcesses} worker process(es)`);

  // One connection for the bench's own queries (counts, CPU accounting), opened on first use.
  let client;
  const query = async (text, params) => {
    if (!client) {
      client = new pg.Client({
        connectionString: env.HOOKFLOW_DATABASE_URL,
        application_name: 'hookflow-bench',
      });
      await client.connect();
      cleanups.push(() => client.end());
    }
    return (await client.query(text, params)).rows;
  };

  const bin = path.join(root, 'bin/hookflow.js');
  // Workers bind no port; each gets its own so a stray listen could never collide.
  const workers = [];
  for (let i = 0; i < workerProcesses; i++)
    workers.push(
      startChild(`worker ${i + 1}`, process.execPath, [bin, 'worker'], { ...env, HOOKFLOW_PORT: '0' }),
    );
  const webhooks = [];
  for (let i = 0; i < webhookProcesses; i++) {
    const port = i === 0 ? env.HOOKFLOW_PORT : String(await freePort());
    webhooks.push({
      url: `http://127.0.0.1:${port}`,
      child: startChild(`webhook ${i + 1}`, process.execPath, [bin, 'webhook'], {
        ...env,
        HOOKFLOW_PORT: port,
      }),
    });
  }
  const webhook = webhooks[0].child;
  const webhookAlive = webhook.assertAlive.bind(webhook);
  webhook.assertAlive = () => {
    webhookAlive();
    for (const w of webhooks.slice(1)) w.child.assertAlive();
    for (const w of workers) w.assertAlive();
  };
  return {
    webhook,
    webhooks,
    worker: workers[0],
    workers,
    async countBacklog() {
      const rows = await query(
        "select count(*)::int as n from executions where status in ('queued', 'running')",
      );
      return rows[0].n;
    },
    async countExecutions(workflowId) {
      const rows = await query('select count(*)::int as n from executions where workflow_id = $1', [
        workflowId,
      ]);
      return rows[0].n;
    },
    /**
     * The PostgreSQL processes that work for a case: the bench database's client backends of the
     * floor (`floor`) or of hookflow (the others, but the bench's own), and the server's own
     * processes (WAL writer, checkpointer, autovacuum…; shared with whatever else runs here).
     */
    async postgresPids(floor) {
      const rows = await query(
        `select pid, backend_type, datname, application_name from pg_stat_activity
          where pid <> pg_backend_pid() and (datname = $1 or datname is null)`,
        [name],
      );
      return rows
        .filter((r) =>
          r.backend_type !== 'client backend'
            ? true
            : r.datname === name &&
              r.application_name !== 'hookflow-bench' &&
              (r.application_name === PG_FLOOR_APPLICATION) === floor,
        )
        .map((r) => r.pid);
    },
  };
}

/** The floor's connections are told apart from hookflow's by this application_name (bench/pg-floor.js). */
const PG_FLOOR_APPLICATION = 'hookflow-pg-floor';

// Last, so that every helper above is initialised before main() runs.
try {
  process.exitCode = await main();
} catch (err) {
  console.error(`bench: ${err.stack ?? err}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
