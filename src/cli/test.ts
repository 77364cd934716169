/**
 * `hookflow test <workflowId> [--target draft|published]` (SPEC 7g, 12): runs the workflow's tests
 * from captured traffic on a running server and prints each with its differing steps; exits 1 when
 * one fails, so a CI job can stop a change before it is published.
 */
import { parseArgs } from 'node:util';
import { CliError, callApi, type Env, exitStatusOf, type Output, SERVER_OPTIONS, serverFrom } from './api.js';

interface SuiteRun {
  target: string;
  version: number;
  passed: number;
  failed: number;
  results: {
    name: string;
    status: 'passed' | 'failed';
    run: { status: string; error: { message?: string } | null };
    steps: { step: string; result: string; expected?: { output: unknown }; actual?: { output: unknown } }[];
    outcome?: { expected: { status: string }; actual: { status: string } };
  }[];
}

export async function test(
  args: string[],
  deps: { env: Env; showHelp(asError: boolean): number; stdout?: Output; stderr?: Output },
): Promise<number> {
  const stdout = deps.stdout ?? process.stdout;
  const stderr = deps.stderr ?? process.stderr;
  const { values, positionals } = parseArgs({
    args,
    options: {
      target: { type: 'string' },
      json: { type: 'boolean' },
      ...SERVER_OPTIONS,
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) return deps.showHelp(false);
  const [workflowId] = positionals;
  if (!workflowId) return deps.showHelp(true);
  return exitStatusOf(stderr, async () => {
    const target = values.target ?? 'published';
    if (target !== 'draft' && target !== 'published')
      throw new CliError(`--target must be "published" or "draft", not "${target}".`, 2);
    const api = serverFrom(values, deps.env);
    const suite = await callApi<SuiteRun>(
      api,
      'POST',
      `/workflows/${encodeURIComponent(workflowId)}/tests/run`,
      {
        target,
      },
    );
    if (values.json) stdout.write(`${JSON.stringify(suite, null, 2)}\n`);
    else {
      for (const r of suite.results) {
        stdout.write(`${r.status === 'passed' ? 'PASS' : 'FAIL'}  ${r.name}\n`);
        if (r.status === 'passed') continue;
        if (r.outcome)
          stdout.write(
            `      run ${r.outcome.actual.status} (expected ${r.outcome.expected.status})${r.run.error?.message ? `: ${r.run.error.message}` : ''}\n`,
          );
        for (const s of r.steps.filter((d) => d.result !== 'same')) {
          stdout.write(`      ${s.step}: ${s.result}`);
          if (s.result === 'changed')
            stdout.write(
              `\n        expected ${JSON.stringify(s.expected?.output)}\n        actual   ${JSON.stringify(s.actual?.output)}`,
            );
          stdout.write('\n');
        }
      }
      stdout.write(
        `${suite.passed} passed, ${suite.failed} failed (${suite.target}, version ${suite.version})\n`,
      );
    }
    return suite.failed > 0 ? 1 : 0;
  });
}
