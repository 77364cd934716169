/** CPU per request of each role during a run, read from /proc (Linux). */
import fs from 'node:fs';
import { sum } from './util.js';

/**
 * CPU per request of each role during one run, from /proc: user + system time of the processes
 * (all their threads), divided by the requests answered. Without --postgres one role, `server`: the
 * process that served the case (on SQLite the writer thread's commits are in it). With --postgres:
 * `webhook` and `worker` (hookflow's processes; for pgfloor, `floor`: its process), `postgres` (the
 * backends of the bench database that serve this case, by application_name, plus the server's own
 * processes: WAL writer, checkpointer, autovacuum…). Always `loadgen` (this process: autocannon)
 * and `machineBusy`, how busy both CPUs were.
 */
export async function cpuAccount(name, target, distributed) {
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
export const CLOCK_TICKS = 100;

/** utime + stime of a process in clock ticks (undefined when it is gone or not on Linux). */
export function processTicks(pid) {
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
export function machineTicks() {
  try {
    const [, ...v] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    const idle = v[3] + (v[4] ?? 0);
    const total = sum(v.slice(0, 8));
    return { busy: total - idle, total };
  } catch {
    return { busy: NaN, total: NaN };
  }
}
