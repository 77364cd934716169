/**
 * The README's curl walk-through, run as written (issue 16: it failed at step 3 and no test ran it):
 * its `sh` block is taken from README.md and run by bash against a real `hookflow start`, with only
 * the port and the data folder changed.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess } from './helpers/process.js';
import { tempDir } from './helpers/server.js';

const root = path.resolve(import.meta.dirname, '..');
let server: ServerProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = tempDir('hookflow-readme-');
  server = await startServerProcess({ HOOKFLOW_DATA_DIR: dataDir });
});

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
});

/** The first ```sh block after the heading. */
function shBlock(markdown: string, heading: string): string {
  const from = markdown.indexOf(heading);
  expect(from, `README has "${heading}"`).toBeGreaterThan(-1);
  const block = /```sh\n([\s\S]*?)```/.exec(markdown.slice(from));
  expect(block, `a sh block after "${heading}"`).not.toBeNull();
  return block![1]!;
}

it('runs the curl walk-through as the README writes it', async () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const script = shBlock(readme, '## A walk through with curl').replaceAll(
    'localhost:5678',
    new URL(server.url).host,
  );
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      'bash',
      ['-eu', '-o', 'pipefail', '-c', script],
      { cwd: root, env: { ...process.env, HOOKFLOW_DATA_DIR: dataDir, HOOKFLOW_LOG_LEVEL: 'warn' } },
      (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout),
    ),
  );
  // Each answer is one JSON document a line (curl -s prints no newline of its own, so split on '}{').
  const answers = out
    .replaceAll('}{', '}\n{')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  const [workflow, listener, capture, events, schema, activated, started, executions] = answers;
  expect(answers, out).toHaveLength(8);
  expect(workflow.trigger.testUrl).toMatch(/\/webhook-test\/orders$/);
  expect(listener.listenerId, JSON.stringify(listener)).toBeTypeOf('string');
  expect(capture.executionId ?? capture.message, JSON.stringify(capture)).toBeDefined();
  expect(events.items[0].item.body).toEqual({ param1: 'a', param2: 'b' });
  expect(schema.fields.map((f: { path: string }) => f.path)).toContain('body.param1');
  expect(activated.active).toBe(true);
  expect(started).toMatchObject({ message: 'Workflow was started' });
  expect(executions.items.map((e: { id: string }) => e.id)).toContain(started.executionId);
}, 60_000);
