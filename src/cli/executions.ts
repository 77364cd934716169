/**
 * `hookflow executions list|show|retry|replay`: looks at and re-runs
 * executions on a running server through its API, like `hookflow listen`.
 */
import { parseArgs } from 'node:util';
import { CliError, callApi, type Env, exitStatusOf, type Output, SERVER_OPTIONS, serverFrom } from './api.js';

interface Execution {
  id: string;
  workflowId: string;
  workflowVersion: number;
  mode: string;
  status: string;
  attempt: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  error: { message?: string; step?: string } | null;
  steps: StepRecord[];
  trigger: unknown;
  resumeAt?: string | null;
}

/** A step record as the API shows it (SPEC 7, 7b: nested records of if/switch/forEach, code logs). */
interface StepRecord {
  name: string;
  type: string;
  status: string;
  output?: unknown;
  error?: { message?: string } | null;
  branch?: string | number;
  steps?: StepRecord[];
  iterations?: { index: number; status: string; steps: StepRecord[] }[];
  iterationCount?: number;
  logs?: string[];
}

interface ExecutionPage {
  items: Execution[];
  nextCursor: string | null;
  /** With --where: whether the field was searched through its index (settings.searchFields). */
  search?: { path: string; indexed: boolean; window?: number; hint?: string };
}

export async function executions(
  args: string[],
  deps: { env: Env; showHelp(asError: boolean): number; stdout?: Output; stderr?: Output },
): Promise<number> {
  const stdout = deps.stdout ?? process.stdout;
  const stderr = deps.stderr ?? process.stderr;
  const { values, positionals } = parseArgs({
    args,
    options: {
      workflow: { type: 'string' },
      status: { type: 'string' },
      mode: { type: 'string' },
      where: { type: 'string' },
      limit: { type: 'string' },
      target: { type: 'string' },
      json: { type: 'boolean' },
      ...SERVER_OPTIONS,
    },
    allowPositionals: true,
    strict: true,
  });
  const [sub, id] = positionals;
  if (values.help) return deps.showHelp(false);
  if (sub === undefined) return deps.showHelp(true);
  return exitStatusOf(stderr, async () => {
    const target = serverFrom(values, deps.env);
    switch (sub) {
      case 'list': {
        const query = new URLSearchParams();
        if (values.workflow) query.set('workflowId', values.workflow);
        if (values.status) query.set('status', values.status);
        if (values.mode) query.set('mode', values.mode);
        if (values.where) query.set('where', values.where);
        const limit = Number(values.limit ?? '20');
        query.set('limit', String(limit));
        let page = await callApi<ExecutionPage>(target, 'GET', `/executions?${query}`);
        const search = page.search;
        // A search (--where) of a field that is not indexed looks at a window of executions per
        // request: follow the cursor until the page is full or the search is over (at most 100
        // requests: a million executions). An indexed one answers full pages.
        for (
          let more = 0;
          values.where && page.items.length < limit && page.nextCursor && more < 100;
          more++
        ) {
          query.set('cursor', page.nextCursor);
          query.set('limit', String(limit - page.items.length));
          const next = await callApi<ExecutionPage>(target, 'GET', `/executions?${query}`);
          page = { items: [...page.items, ...next.items], nextCursor: next.nextCursor };
        }
        if (search && !search.indexed)
          stderr.write(
            `Not indexed: searched the executions ${search.window ?? ''} at a time, newest first${page.nextCursor ? ' (stopped before the oldest)' : ''}.\n${search.hint ?? ''}\n`,
          );
        if (values.json) {
          stdout.write(`${JSON.stringify(page.items, null, 2)}\n`);
          return 0;
        }
        stdout.write(
          `${['ID', 'STATUS', 'MODE', 'ATTEMPT', 'CREATED', 'DURATION', 'WORKFLOW'].join('\t')}\n`,
        );
        for (const e of page.items) {
          stdout.write(
            `${[e.id, e.status, e.mode, e.attempt, e.createdAt, duration(e), e.workflowId].join('\t')}\n`,
          );
        }
        return 0;
      }
      case 'show': {
        const e = await callApi<Execution>(target, 'GET', `/executions/${encodeURIComponent(need(id))}`);
        if (values.json) {
          stdout.write(`${JSON.stringify(e, null, 2)}\n`);
          return 0;
        }
        stdout.write(
          `Execution ${e.id}\n  workflow ${e.workflowId} (version ${e.workflowVersion}), ${e.mode}, attempt ${e.attempt}\n  ${e.status} in ${duration(e)}${e.error?.message ? ` — ${e.error.step ? `step "${e.error.step}": ` : ''}${e.error.message}` : ''}\n\nTrigger item:\n${indent(JSON.stringify(e.trigger, null, 2))}\n`,
        );
        if (e.status === 'waiting' && e.resumeAt) stdout.write(`\nWaiting until ${e.resumeAt}\n`);
        stdout.write(showSteps(e.steps));
        return 0;
      }
      case 'retry':
      case 'replay': {
        // replay --target published|draft (SPEC 8); the server's default is the published version.
        const into = sub === 'replay' ? replayTarget(values.target) : undefined;
        const res = await callApi<{ executionId: string }>(
          target,
          'POST',
          `/executions/${encodeURIComponent(need(id))}/${sub}`,
          into ? { target: into } : undefined,
        );
        stderr.write(
          sub === 'retry'
            ? `Retrying ${id} as a new execution:\n`
            : `Replaying ${id} into the ${into ?? 'published'} version as a new execution:\n`,
        );
        stdout.write(`${res.executionId}\n`);
        return 0;
      }
      default:
        throw new CliError(`Unknown executions command "${sub}". Run \`hookflow executions --help\`.`, 2);
    }
  });
}

function replayTarget(value: string | undefined): 'published' | 'draft' | undefined {
  if (value === undefined || value === 'published' || value === 'draft') return value;
  throw new CliError(`--target must be "published" or "draft", not "${value}".`, 2);
}

function need(id: string | undefined): string {
  if (!id) throw new CliError('This command needs an execution id (see `hookflow executions list`).', 2);
  return id;
}

function duration(e: Execution): string {
  if (!e.startedAt || !e.finishedAt) return '-';
  return `${Date.parse(e.finishedAt) - Date.parse(e.startedAt)} ms`;
}

const indent = (text: string) => text.replace(/^/gm, '  ');

/** Step records, the nested ones (branches, iterations) indented under the step holding them. */
function showSteps(steps: readonly StepRecord[]): string {
  let out = '';
  for (const step of steps) {
    const nested = step.steps !== undefined || step.iterations !== undefined;
    const branch = step.branch !== undefined ? `, branch ${step.branch}` : '';
    const count = step.iterationCount !== undefined ? `, ${step.iterationCount} iterations` : '';
    out += `\nStep "${step.name}" (${step.type}): ${step.status}${branch}${count}\n`;
    // A step holding steps shows theirs; its output is the last one's.
    const detail = step.error?.message ?? (nested ? undefined : JSON.stringify(step.output, null, 2));
    if (detail) out += `${indent(detail)}\n`;
    for (const line of step.logs ?? []) out += `  log: ${line}\n`;
    if (step.steps) out += indent(showSteps(step.steps));
    for (const it of step.iterations ?? [])
      out += indent(`\nIteration ${it.index}: ${it.status}\n${indent(showSteps(it.steps))}`);
  }
  return out;
}
