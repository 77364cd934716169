/** The report: the figures of every case over the rounds, the targets, and the printed tables. */
import os from 'node:os';
import { CASES, connectionsOf, FLOOR, HOOKFLOW_CASES, TO_FLOOR } from './cases.js';
import { ROUTED_STEPS } from './workflows.js';
import {
  connections,
  duration,
  opts,
  rounds,
  slices,
  soakSeconds,
  warmup,
  warmupConnections,
  webhookProcesses,
  workerProcesses,
} from './cli.js';
import { BODY, DRAIN_LIMIT_MS, UPLOAD_BYTES } from './load.js';
import { tuning } from './processes.js';
import { mean, MiB, sum } from './util.js';
import { FLOW_STEPS } from '../floor-server.js';

/**
 * Issue 20's targets, against the durable floor measured in the same run: the least a receiver
 * that commits each request before answering can do on this machine (SQLite: bench/durable-floor.js;
 * --postgres: bench/pg-floor.js).
 */
export const TARGETS = {
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

export function summarize({ runs, hwm, executions, answered2xx, hookflow2xx, upload, soak }) {
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
export function floorRun(runs, round) {
  return runs.find((r) => r.case === FLOOR && r.round === round);
}

/** The floor's req/s in `round`. */
export function floorOfRound(runs, round) {
  return floorRun(runs, round).requestsPerSec;
}

export function target(name, value, wanted, met) {
  return { name, value, wanted, met };
}

/** The target that a case (or the soak) had no non-2xx answers and no errors. */
export function noFailures(name, { non2xx, errors }) {
  return target(name, non2xx + errors, '0', non2xx + errors === 0);
}

export function printReport(r) {
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

export function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('   '))
    .join('\n');
}

export const x = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : 'n/a');
export const num = (n) => Math.round(n).toLocaleString('en-US');
// Whole milliseconds from autocannon alone (the soak); timed runs have decimals.
export const ms = (n) => (Number.isInteger(n) ? `${n} ms` : `${n.toFixed(n >= 10 ? 1 : n >= 1 ? 2 : 3)} ms`);
export const mb = (bytes) => (bytes === undefined ? 'n/a' : `${Math.round(bytes / 1024 / 1024)} MB`);
