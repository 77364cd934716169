/** The bench's command line: its options, checked, and the settings derived from them. */
import { parseArgs } from 'node:util';

export const { values: opts } = parseArgs({
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
    case: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
});
if (opts.help) {
  console.log(
    'Usage: npm run bench -- [--case io] [--duration SECONDS] [--rounds N] [--slices N] [--connections N] [--warmup SECONDS] [--soak SECONDS] [--skip-upload] [--json] [--postgres [--webhooks N] [--workers N]]',
  );
  process.exit(0);
}
export const duration = positiveInt('duration', opts.duration);
/** `--case io`: the io case alone (bench/lib/io.js); the other cases run in rounds without it. */
export const onlyCase = opts.case;
if (onlyCase !== undefined && onlyCase !== 'io') usage('--case: only `io` runs on its own');
export const rounds = positiveInt('rounds', opts.rounds);
export const slices = positiveInt('slices', opts.slices);
export const sliceSeconds = duration / slices;
if (sliceSeconds < 1) usage('--slices must leave each slice at least 1 s of --duration');
export const connections = positiveInt('connections', opts.connections);
export const warmup = Number(opts.warmup);
export const soakSeconds = Number(opts.soak);
export const webhookProcesses = positiveInt('webhooks', opts.webhooks);
export const workerProcesses = positiveInt('workers', opts.workers);
if ((webhookProcesses > 1 || workerProcesses > 1) && !opts.postgres)
  usage('--webhooks and --workers start distributed mode: add --postgres');
if (!Number.isInteger(soakSeconds) || soakSeconds < 0) usage('--soak must be a whole number of seconds ≥ 0');
if (soakSeconds > 0 && opts.postgres)
  usage('--soak measures `hookflow start` (SQLite); leave out --postgres');
// Warm-up only needs the code paths hot (JIT, SQLite pages), not the full load.
export const warmupConnections = Math.min(connections, 10);
if (!Number.isFinite(warmup) || warmup < 0) usage('--warmup must be a number of seconds ≥ 0');

export function positiveInt(name, raw) {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) usage(`--${name} must be a whole number ≥ 1`);
  return n;
}

export function usage(message) {
  console.error(`bench: ${message}`);
  process.exit(2);
}
