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
 * `--case io` runs the io case alone instead (bench/lib/io.js, SPEC 7d): `webhook → http (an API
 * answering in 100 ms) → set` from 50 senders for `--duration` seconds (after `--warmup` seconds
 * of it on a workflow of its own), then the executions it drains per second, the CPU each costs,
 * the event loop's p99 delay and the peak RSS; then 5 000 executions waiting on an API that holds its
 * answers, and the peak RSS meanwhile. With `--postgres`: one `hookflow webhook` and one `hookflow
 * worker`, RSS for each.
 *
 *   npm run bench -- [--case io] [--duration 10] [--rounds 1] [--slices 5] [--connections 50] [--warmup 2]
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
 *
 * This file is the run itself (main: start, warm up, rounds of slices, upload, counts, soak,
 * report). The rest is in bench/lib/: cli.js (options), processes.js (children, cleanup, hookflow's
 * API and CLI), distributed.js (--postgres), load.js (autocannon, one sender, the upload, RSS and
 * counts), cpu.js (CPU per request from /proc), cases.js (the cases, one run of a case, merging
 * slices, the soak) and report.js (figures, targets, tables).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  BARE_SERVER,
  CASES,
  connectionsOf,
  HOOKFLOW_CASES,
  measure,
  mergeSlices,
  runSoak,
} from './lib/cases.js';
import {
  onlyCase,
  opts,
  rounds,
  slices,
  sliceSeconds,
  soakSeconds,
  warmup,
  warmupConnections,
} from './lib/cli.js';
import { ioLines, postgresIoStore, runIo, sqliteIoStore } from './lib/io.js';
import { startDistributed } from './lib/distributed.js';
import {
  countExecutions,
  drain,
  load,
  readProcStatus,
  sumCounter,
  UPLOAD_BYTES,
  uploadCost,
} from './lib/load.js';
import {
  cleanup,
  cleanups,
  freePort,
  hookflowArgs,
  root,
  startChild,
  tokenClient,
  waitForReady,
  serverEnv,
} from './lib/processes.js';
import { printReport, summarize } from './lib/report.js';
import { log, MiB } from './lib/util.js';
import { activeWorkflow, ROUTED_STEPS } from './lib/workflows.js';
import { FLOW_STEPS } from './floor-server.js';

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
    ...serverEnv(dataDir, hookPort),
    // The io case's API listens on loopback.
    ...(onlyCase === 'io' ? { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } : {}),
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
  const hook = distributed?.webhook ?? startChild('hookflow', process.execPath, hookflowArgs('start'), env);
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
  if (onlyCase === 'io') {
    const io = await runIo({
      api,
      hookUrl,
      hook,
      workers: distributed ? distributed.workers : [hook],
      store: distributed ? postgresIoStore(distributed.query) : sqliteIoStore(dataDir),
    });
    if (opts.json) console.log(JSON.stringify({ io }, null, 2));
    else console.log(ioLines(io, opts.postgres).join('\n'));
    return io.drained && io.failed === 0 ? 0 : 1;
  }
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

// Last, so that every helper above is initialised before main() runs.
try {
  process.exitCode = await main();
} catch (err) {
  console.error(`bench: ${err.stack ?? err}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
