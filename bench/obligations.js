#!/usr/bin/env node
/**
 * What each of SPEC's obligations costs a receiver that commits every request before answering, on
 * this machine: the durable floor (bench/durable-floor.js), the contract floor with none, one, or
 * all of them (floor-server.js OBLIGATIONS):
 *   answer  the answer's headers: X-Request-Id, X-Hookflow-Execution-Id, nosniff, the sandbox
 *   item    the whole trigger item of SPEC 4 (method, path, files, webhookUrl, executionMode…)
 *   row     hookflow's execution columns instead of the plain floor's six
 * The webhook target of issue 20 (≥ 0.90× the durable floor) is out of reach for any receiver that
 * carries all three if `all` stays under it: hookflow's webhook carries them and more.
 *
 * Each round runs every variant for one slice, in rotating order (as bench/run.js does), 50
 * connections of form POSTs; the ratio of a variant is taken against the durable floor of the same
 * round. No hookflow process: nothing here measures hookflow.
 *
 *   node bench/obligations.js [--rounds 8] [--seconds 2] [--connections 50]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

// Linux's USER_HZ, which /proc/PID/stat counts in (as bench/run.js).
const TICKS_PER_SECOND = 100;
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const VARIANTS = [
  ['durable', undefined],
  ['none', '--contract='],
  ['answer', '--contract=answer'],
  ['item', '--contract=item'],
  ['row', '--contract=row'],
  ['all', '--contract'],
];

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookflow-obligations-'));
const children = [];
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const servers = [];
for (const [i, [name, flag]] of VARIANTS.entries()) {
  const port = 42_100 + i;
  const child = spawn(
    process.execPath,
    [path.join(root, 'bench/durable-floor.js'), String(port), dataDir, ...(flag ? [flag] : [])],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => String(chunk).includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`${name} exited (${code})`)));
  });
  servers.push({ name, pid: child.pid, url: `http://127.0.0.1:${port}${flag ? '/webhook/bench' : '/'}` });
}

const results = new Map(servers.map((s) => [s.name, { rates: [], cpu: 0, loadgen: 0, requests: 0 }]));
for (let round = 0; round < rounds; round++) {
  const order = servers.map((_, i) => servers[(i + round) % servers.length]);
  for (const server of order) {
    process.stderr.write(`obligations: round ${round + 1}/${rounds}: ${server.name}\n`);
    const before = [processTicks(server.pid), process.cpuUsage()];
    const result = await autocannon({
      url: server.url,
      connections,
      duration: seconds,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'param1=a&param2=b',
    });
    const loadgen = process.cpuUsage(before[1]);
    const r = results.get(server.name);
    r.rates.push(result.requests.total / seconds);
    r.requests += result.requests.total;
    r.cpu += ((processTicks(server.pid) - before[0]) * 1e6) / TICKS_PER_SECOND;
    r.loadgen += loadgen.user + loadgen.system;
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.name}: non-2xx or errors`);
  }
}

const floor = results.get('durable').rates;
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(
  `${rounds} rounds × ${seconds} s, ${connections} connections; ÷ floor: against the durable floor of the same round`,
);
console.log('variant     req/s (mean)   ÷ floor: mean (min–max)   server µs/req   loadgen µs/req');
for (const [name, r] of results) {
  const ratios = r.rates.map((rate, i) => rate / floor[i]);
  console.log(
    [
      name.padEnd(10),
      Math.round(mean(r.rates)).toLocaleString('en-US').padStart(12),
      `${mean(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`.padStart(
        24,
      ),
      (r.cpu / r.requests).toFixed(1).padStart(15),
      (r.loadgen / r.requests).toFixed(1).padStart(16),
    ].join(' '),
  );
}
process.exit(0);

// utime + stime of a process, all its threads (/proc/PID/stat fields 14 and 15), in clock ticks.
function processTicks(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}
