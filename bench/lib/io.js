/**
 * The io case (SPEC 7d): executions that wait on the network. A `webhook → http (an API answering
 * in 100 ms) → set` workflow; the API is a child process of its own on loopback.
 *
 * drain: 50 senders post to the workflow for `--duration` seconds; the executor runs what they
 * accepted (most of it after the load stops: accepting is far faster than a 100 ms call). Reported:
 * executions drained per second — the executions run divided by the time from the first start to
 * the last finish (the store's started_at/finished_at) — and the peak RSS of each process meanwhile.
 * Target: ≥ 1 000/s on SQLite (`hookflow start`), ≥ 800/s on PostgreSQL (one `hookflow webhook`,
 * one `hookflow worker`). Throughput moves with whatever else the machine runs; the CPU each
 * execution costs hookflow's processes moves far less, so it is reported too (from /proc: all
 * threads, the main thread apart), over the whole drain (accepting included) and over the part
 * after the load stopped (running only), with how busy the machine was; and the p99 delay of the
 * webhook process's event loop over the drain (its `/metrics`, prom-client's histogram, which
 * each scrape resets).
 *
 * waiting: 5 000 executions are accepted while the API holds every call unanswered (it answers
 * once told to); their peak RSS per process while they wait is the figure. Target: < 300 MB.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import fs from 'node:fs';
import { activeWorkflow } from './workflows.js';
import { connections, duration, warmup, warmupConnections } from './cli.js';
import { CLOCK_TICKS, machineTicks, processTicks } from './cpu.js';
import { BODY, FORM, load, pollRss } from './load.js';
import { freePort, startChild } from './processes.js';
import { log, MiB, sum } from './util.js';

/** The API: `/io?ms=N` answers after N ms; `/held` answers once `/release` was called. */
const IO_API = `
const http = require('node:http');
let held = [];
let holding = true;
let open = 0;
let most = 0;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/stats') { res.end(JSON.stringify({ most })); most = 0; return; }
    open++;
    most = Math.max(most, open);
    res.on('close', () => open--);
    const answer = () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"ok":true}'); };
    if (url.pathname === '/release') { holding = false; for (const a of held.splice(0)) a(); return answer(); }
    if (url.pathname === '/hold') { holding = true; return answer(); }
    if (url.pathname === '/held') return holding ? held.push(answer) : answer();
    setTimeout(answer, Number(url.searchParams.get('ms') ?? 100));
  });
});
server.keepAliveTimeout = 72_000;
server.maxConnections = 100_000;
server.listen(Number(process.argv[1]), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => process.exit(0));
`;

export const IO_TARGETS = { sqliteDrainPerSec: 1_000, postgresDrainPerSec: 800, waitingRssBytes: 300 * MiB };
export const WAITING = 5_000;
const DRAIN_LIMIT_MS = 180_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs both parts against a started hookflow (`hook`: the process answering webhooks; `workers`:
 * the executor processes, `hook` itself on SQLite). `store` reads the store: `span(workflowId)`.
 */
export async function runIo({ api, hookUrl, hook, workers, store }) {
  const port = await freePort();
  const ioApi = startChild('io API', process.execPath, ['-e', IO_API, String(port)], process.env);
  await ioApi.waitForOutput(/ready/);
  const apiUrl = `http://127.0.0.1:${port}`;
  const steps = (url) => [
    { name: 'call', type: 'http', method: 'POST', url, body: { p: '{{ body.param1 }}' } },
    { name: 'done', type: 'set', fields: { ok: '{{ $steps.call.output.body.ok }}' } },
  ];
  const io = await activeWorkflow(api, {
    name: 'bench-io',
    trigger: { path: 'bench-io', methods: ['POST'] },
    steps: steps(`${apiUrl}/io?ms=100`),
  });
  const held = await activeWorkflow(api, {
    name: 'bench-io-held',
    trigger: { path: 'bench-io-held', methods: ['POST'] },
    steps: steps(`${apiUrl}/held`),
  });
  const processes = [hook, ...workers.filter((w) => w !== hook)];

  // Warm-up (a workflow of its own, outside the figures): the engine thread starts on first use,
  // and the code paths get hot.
  if (warmup > 0) {
    const warm = await activeWorkflow(api, {
      name: 'bench-io-warmup',
      trigger: { path: 'bench-io-warmup', methods: ['POST'] },
      steps: steps(`${apiUrl}/io?ms=100`),
    });
    log(`io: warming up for ${warmup} s (not in the figures)`);
    const warmed = await load(`${hookUrl}/webhook/bench-io-warmup`, warmup, warmupConnections);
    await untilDone(store, warm.id, warmed['2xx'], hook);
    await fetch(`${apiUrl}/stats`);
  }

  // drain
  log(`io: ${connections} senders for ${duration} s to webhook → http (100 ms) → set`);
  let rss = processes.map((p) => pollRss(p.pid));
  const lag = () => eventLoopP99(hookUrl, api.token);
  await lag();
  const cpuStart = cpuNow(processes);
  const sent = await load(`${hookUrl}/webhook/bench-io`, duration, connections);
  const accepted = sent['2xx'];
  const cpuLoadEnd = cpuNow(processes);
  const doneAtLoadEnd = await store.finished(io.id);
  const drained = await untilDone(store, io.id, accepted, hook);
  const cpuEnd = cpuNow(processes);
  const lagP99 = await lag();
  const drainPeak = rss.map((r) => r.stop());
  const apiMostOpen = (await (await fetch(`${apiUrl}/stats`)).json()).most;
  const span = await store.span(io.id);
  const drainPerSec = span.n / Math.max(0.001, span.seconds);
  log(
    `io: ${accepted} accepted in ${duration} s; ${span.n} run (${span.failed} failed) in ${span.seconds.toFixed(1)} s: ${Math.round(drainPerSec)}/s`,
  );

  // waiting
  log(`io: ${WAITING} executions accepted while the API holds every call`);
  rss = processes.map((p) => pollRss(p.pid));
  await sendN(`${hookUrl}/webhook/bench-io-held`, WAITING, connections);
  // They wait: in flight up to the cap (the API holds them), the rest queued.
  await sleep(3_000);
  const waitingPeak = rss.map((r) => r.stop());
  const waitingMostOpen = (await (await fetch(`${apiUrl}/stats`)).json()).most;
  await fetch(`${apiUrl}/release`);
  const waitingDrained = await untilDone(store, held.id, WAITING, hook);
  await ioApi.stop();
  return {
    accepted,
    acceptedPerSec: accepted / duration,
    executions: span.n,
    failed: span.failed,
    drainSeconds: span.seconds,
    drainPerSec,
    apiMostOpen,
    cpu: {
      all: cpuPer(cpuStart, cpuEnd, span.n),
      afterLoad: cpuPer(cpuLoadEnd, cpuEnd, span.n - doneAtLoadEnd),
    },
    eventLoopP99Ms: lagP99,
    drained: drained && waitingDrained,
    drainPeakRssBytes: drainPeak,
    waiting: WAITING,
    waitingPeakRssBytes: waitingPeak,
    waitingMostOpen,
    processes: processes.map((p) => p.name),
  };
}

/** CPU clock ticks so far of each process (main thread and all), and of the machine. */
function cpuNow(processes) {
  return {
    at: Date.now(),
    machine: machineTicks(),
    processes: processes.map((p) => ({
      all: processTicks(p.pid) ?? 0,
      main: threadTicks(p.pid, p.pid) ?? 0,
    })),
  };
}

/** utime + stime of one thread of `pid` (Linux). */
function threadTicks(pid, tid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** CPU ms per execution between two `cpuNow`s, per process (all threads, main thread), and the machine's load. */
function cpuPer(a, b, executions) {
  const ms = (ticks) => ((ticks / CLOCK_TICKS) * 1000) / Math.max(1, executions);
  return {
    executions,
    seconds: (b.at - a.at) / 1000,
    perExecutionMs: b.processes.map((p, i) => ({
      all: ms(p.all - a.processes[i].all),
      main: ms(p.main - a.processes[i].main),
    })),
    totalMs: ms(sum(b.processes.map((p, i) => p.all - a.processes[i].all))),
    machineBusy: (b.machine.busy - a.machine.busy) / Math.max(1, b.machine.total - a.machine.total),
  };
}

/** The p99 event-loop delay (ms) of the process at `url` since its last scrape (undefined: not reported). */
async function eventLoopP99(url, token) {
  try {
    const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    const m = (await res.text()).match(/^hookflow_nodejs_eventloop_lag_p99_seconds (\S+)$/m);
    return m ? Number(m[1]) * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** Posts `n` webhooks from `conns` senders. */
async function sendN(url, n, conns) {
  let next = 0;
  await Promise.all(
    Array.from({ length: conns }, async () => {
      while (next < n) {
        next++;
        const res = await fetch(url, { method: 'POST', headers: FORM, body: BODY });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`io: webhook answered ${res.status}`);
      }
    }),
  );
}

async function untilDone(store, workflowId, n, hook) {
  const started = Date.now();
  for (;;) {
    hook.assertAlive();
    if ((await store.finished(workflowId)) >= n) return true;
    if (Date.now() - started > DRAIN_LIMIT_MS) return false;
    await sleep(100);
  }
}

/** The io figures from SQLite's file. */
export function sqliteIoStore(dataDir) {
  const query = (sql, ...params) => {
    const db = new Database(path.join(dataDir, 'hookflow.sqlite'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).get(...params);
    } finally {
      db.close();
    }
  };
  return {
    async finished(workflowId) {
      return query(
        "SELECT count(*) AS n FROM executions WHERE workflow_id = ? AND status IN ('succeeded', 'failed')",
        workflowId,
      ).n;
    },
    async span(workflowId) {
      const r = query(
        `SELECT count(*) AS n, sum(status = 'failed') AS failed, min(started_at) AS first, max(finished_at) AS last
           FROM executions WHERE workflow_id = ?`,
        workflowId,
      );
      return spanOf(r);
    },
  };
}

/** The io figures from PostgreSQL (`query(text, params)` → rows). */
export function postgresIoStore(query) {
  return {
    async finished(workflowId) {
      const [r] = await query(
        "select count(*)::int as n from executions where workflow_id = $1 and status in ('succeeded', 'failed')",
        [workflowId],
      );
      return r.n;
    },
    async span(workflowId) {
      const [r] = await query(
        `select count(*)::int as n, count(*) filter (where status = 'failed')::int as failed,
                min(started_at) as first, max(finished_at) as last
           from executions where workflow_id = $1`,
        [workflowId],
      );
      return spanOf(r);
    },
  };
}

const spanOf = (r) => ({
  n: Number(r.n),
  failed: Number(r.failed ?? 0),
  seconds: (Date.parse(r.last) - Date.parse(r.first)) / 1000,
});

const pct = (x) => `${Math.round(x * 100)} %`;
const cpuLine = (c, names) =>
  `${c.totalMs.toFixed(3)} ms${names.length > 1 ? ` (${c.perExecutionMs.map((p, i) => `${names[i]} ${p.all.toFixed(3)}`).join(', ')})` : ''}, main thread ${c.perExecutionMs.map((p) => p.main.toFixed(3)).join(' + ')} ms`;

/** The io part of the report, as lines. */
export function ioLines(io, postgres) {
  const target = postgres ? IO_TARGETS.postgresDrainPerSec : IO_TARGETS.sqliteDrainPerSec;
  const mb = (b) => (b === undefined ? '?' : `${Math.round(b / MiB)} MB`);
  const peaks = (list) => list.map((b, i) => `${io.processes[i]} ${mb(b)}`).join(', ');
  const worstWaiting = Math.max(...io.waitingPeakRssBytes.map((b) => b ?? 0));
  return [
    `io (webhook → http 100 ms → set, ${postgres ? 'PostgreSQL: webhook + worker' : 'SQLite: hookflow start'}):`,
    `  drained ${Math.round(io.drainPerSec)} executions/s (${io.executions} in ${io.drainSeconds.toFixed(1)} s, ${io.failed} failed; ${Math.round(io.acceptedPerSec)} accepted/s) — target ≥ ${target}/s: ${io.drainPerSec >= target ? 'met' : 'NOT met'}`,
    `  CPU per execution: ${cpuLine(io.cpu.all, io.processes)} (accepting and running, machine ${pct(io.cpu.all.machineBusy)} busy); after the load stopped: ${cpuLine(io.cpu.afterLoad, io.processes)} (${io.cpu.afterLoad.executions} executions, machine ${pct(io.cpu.afterLoad.machineBusy)} busy)`,
    `  event-loop delay p99 (${io.processes[0]}, over the drain): ${io.eventLoopP99Ms === undefined ? '?' : `${io.eventLoopP99Ms.toFixed(1)} ms`}`,
    `  peak RSS while draining: ${peaks(io.drainPeakRssBytes)}; most calls open at the API at once: ${io.apiMostOpen}`,
    `  ${io.waiting} waiting on a held API (${io.waitingMostOpen} calls open at it): peak RSS ${peaks(io.waitingPeakRssBytes)} — target < 300 MB per process: ${worstWaiting < IO_TARGETS.waitingRssBytes ? 'met' : 'NOT met'}`,
    ...(io.drained ? [] : ['  NOT DRAINED within the limit']),
  ];
}
