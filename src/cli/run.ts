/**
 * `hookflow run <workflowId> [--item FILE] [--wait]` (SPEC 7f): Run now from a terminal — a
 * test-mode run of the draft on a running server, through its API. Prints the execution's id on
 * stdout; with --wait it follows the execution to its end (looked at every 200 ms) and exits 1
 * when it failed, so a script can run a workflow and check it.
 */
import fs from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { CliError, callApi, type Env, exitStatusOf, type Output, SERVER_OPTIONS, serverFrom } from './api.js';

const FINAL = new Set(['succeeded', 'failed', 'filtered', 'skipped']);

export async function run(
  args: string[],
  deps: {
    env: Env;
    showHelp(asError: boolean): number;
    stdout?: Output;
    stderr?: Output;
    readStdin?: () => Promise<string>;
  },
): Promise<number> {
  const stdout = deps.stdout ?? process.stdout;
  const stderr = deps.stderr ?? process.stderr;
  const { values, positionals } = parseArgs({
    args,
    options: {
      item: { type: 'string' },
      wait: { type: 'boolean' },
      ...SERVER_OPTIONS,
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) return deps.showHelp(false);
  const [workflowId] = positionals;
  if (workflowId === undefined || positionals.length > 1) return deps.showHelp(true);
  return exitStatusOf(stderr, async () => {
    const target = serverFrom(values, deps.env);
    const item = values.item === undefined ? undefined : await readItem(values.item, deps.readStdin);
    const { executionId } = await callApi<{ executionId: string }>(
      target,
      'POST',
      `/workflows/${encodeURIComponent(workflowId)}/run`,
      item === undefined ? {} : { item },
    );
    stdout.write(`${executionId}\n`);
    if (!values.wait) return 0;
    for (;;) {
      const e = await callApi<{ status: string; error: { message?: string; step?: string } | null }>(
        target,
        'GET',
        `/executions/${encodeURIComponent(executionId)}`,
      );
      if (FINAL.has(e.status)) {
        const why = e.error?.message
          ? ` — ${e.error.step ? `step "${e.error.step}": ` : ''}${e.error.message}`
          : '';
        stderr.write(`Execution ${executionId} ${e.status}${why}\n`);
        return e.status === 'failed' ? 1 : 0;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });
}

/** The item from FILE (`-`: stdin): a JSON object. */
async function readItem(file: string, readStdin?: () => Promise<string>): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = file === '-' ? await (readStdin ?? stdinText)() : await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new CliError(`Could not read --item ${file}: ${(err as Error).message}.`, 2);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CliError(`--item ${file} is not JSON: ${(err as Error).message}.`, 2);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new CliError(
      `--item ${file} must hold a JSON object (the trigger item), e.g. {"body": {"id": 1}}.`,
      2,
    );
  return parsed as Record<string, unknown>;
}

async function stdinText(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
