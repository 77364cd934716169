import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/server.js';
import { BIN, freePort, runCli, type ServerProcess, startServerProcess } from '../helpers/process.js';

const children: ServerProcess[] = [];
afterAll(() => {
  for (const c of children) c.child.kill('SIGKILL');
});

describe('hookflow CLI', () => {
  it('refuses bad configuration with one line and exit code 2', async () => {
    const ran = await runCli(['start'], { HOOKFLOW_PORT: 'eighty', HOOKFLOW_DATA_DIR: tempDir() });
    expect(ran.code).toBe(2);
    expect(ran.stderr.trim().split('\n')).toHaveLength(1);
    expect(ran.stderr).toContain('HOOKFLOW_PORT="eighty" is invalid');
  });

  it('refuses a distributed process without HOOKFLOW_ENCRYPTION_KEY, before connecting, with exit code 2', async () => {
    const ran = await runCli(['webhook'], {
      HOOKFLOW_DATA_DIR: tempDir(),
      HOOKFLOW_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
    });
    expect(ran.code).toBe(2);
    expect(ran.stderr.trim().split('\n')).toHaveLength(1);
    expect(ran.stderr).toContain('HOOKFLOW_ENCRYPTION_KEY is required with HOOKFLOW_DATABASE_URL');
  });

  it.each([[['start', '--prot', '1']], [['bogus']], [['tokens', 'create']]])(
    'refuses bad usage %j with exit code 2',
    async (args) => {
      const ran = await runCli(args, { HOOKFLOW_DATA_DIR: tempDir() });
      expect(ran.code).toBe(2);
      expect(ran.stderr).toMatch(/hookflow: /);
    },
  );

  it.each([
    ['--help'],
    ['start', '--help'],
    ['tokens', '--help'],
    ['setup-code', '--help'],
    ['workflows', '--help'],
  ])('prints help for %s', async (...args) => {
    const ran = await runCli(args);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/Usage/);
  });

  /** `hookflow start` with its output in `mode`: a terminal (util-linux `script` gives it a PTY) or pipes. */
  async function startOutput(mode: 'terminal' | 'pipes', env: Record<string, string> = {}) {
    const port = await freePort();
    const command = `exec ${process.execPath} ${BIN} start`;
    const child =
      mode === 'terminal'
        ? spawn('script', ['-qfec', command, '/dev/null'], {
            stdio: ['ignore', 'pipe', 'pipe'],
            env: runEnv(),
          })
        : spawn(process.execPath, [BIN, 'start'], { stdio: ['ignore', 'pipe', 'pipe'], env: runEnv() });
    function runEnv() {
      return {
        ...process.env,
        HOOKFLOW_LOG_LEVEL: 'info',
        HOOKFLOW_HOST: '127.0.0.1',
        HOOKFLOW_PORT: String(port),
        HOOKFLOW_BASE_URL: `http://127.0.0.1:${port}`,
        HOOKFLOW_DATA_DIR: tempDir(),
        ...env,
      };
    }
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    // Both lines before the signal: the announcement is written synchronously, the JSON log line by
    // pino's asynchronous destination, so on a terminal it can arrive a moment after the
    // announcement, and `script` stopped at once would lose it.
    const started = () =>
      ['hookflow is ready', 'hookflow is listening'].every((l) => `${stdout}${stderr}`.includes(l));
    const deadline = Date.now() + 20_000;
    while (!started() && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGTERM');
    await new Promise((r) => child.once('close', r));
    return { stdout, stderr, base: `http://127.0.0.1:${port}` };
  }

  it('prints readable lines on a terminal, ending with where the UI is and what to do first (issue 16)', async () => {
    const { stdout, base } = await startOutput('terminal');
    const lines = stdout.split(/\r?\n/).filter((l) => l.trim() !== '');
    const listening = lines.findIndex((l) => l.includes('hookflow is listening'));
    expect(listening, stdout).toBeGreaterThanOrEqual(0);
    // pino-pretty's line ("[12:00:00] INFO: hookflow is listening …"), not a JSON document.
    expect(lines[listening]).toMatch(/INFO.*hookflow is listening/);
    expect(lines[listening]!.trim().startsWith('{')).toBe(false);
    expect(lines.some((l) => l.trim().startsWith('{"level"'))).toBe(false);
    const ready = lines.findIndex((l) => l.includes('hookflow is ready'));
    expect(ready).toBeGreaterThan(listening);
    expect(lines[ready]).toContain('Open this address in a browser to create the owner account');
    // The next line is the setup page's address with the one-time code (SPEC 11).
    expect(lines[ready + 1]).toMatch(
      new RegExp(`^Create the owner account: ${base.replaceAll('.', '\\.')}/#setup-code=[0-9a-f]{32}$`),
    );
  });

  it('logs a JSON document a line when its output is not a terminal, and with HOOKFLOW_LOG_FORMAT=json anywhere', async () => {
    for (const [mode, env] of [
      ['pipes', {}],
      ['terminal', { HOOKFLOW_LOG_FORMAT: 'json' }],
    ] as const) {
      const { stdout, stderr } = await startOutput(mode, env);
      // Under `script` stdout and stderr share the terminal: the announcement is the only other line.
      const lines = stdout
        .split(/\r?\n/)
        .filter(
          (l) =>
            l.trim() !== '' &&
            !l.includes('hookflow is ready') &&
            !l.startsWith('Create the owner account:') &&
            !l.startsWith('Webhooks:'),
        );
      expect(lines.length, mode).toBeGreaterThan(0);
      for (const line of lines) expect(() => JSON.parse(line), `${mode}: ${line}`).not.toThrow();
      expect(
        lines.some((l) => JSON.parse(l).msg === 'hookflow is listening'),
        mode,
      ).toBe(true);
      expect(`${stdout}${stderr}`, mode).toContain('hookflow is ready');
    }
  });

  it('creates a token that the running server accepts, then shuts down gracefully on SIGTERM', async () => {
    const dataDir = tempDir();
    const server = await startServerProcess({ HOOKFLOW_DATA_DIR: dataDir });
    children.push(server);
    const ran = await runCli(['tokens', 'create', '--name', 'ci'], { HOOKFLOW_DATA_DIR: dataDir });
    expect(ran.code).toBe(0);
    const token = ran.stdout.trim().split('\n').at(-1)!;
    expect(token).toMatch(/^hf_[A-Za-z0-9_-]{43}$/);

    expect((await fetch(`${server.url}/api/v1/workflows`)).status).toBe(401);
    const res = await fetch(`${server.url}/api/v1/workflows`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);

    const listed = await runCli(['tokens', 'list'], { HOOKFLOW_DATA_DIR: dataDir });
    expect(listed.stdout).toContain('ci');
    expect(listed.stdout).not.toContain(token);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('stopped');
  });

  it('exports and imports workflows', async () => {
    const dataDir = tempDir();
    const file = path.join(dataDir, 'in.json');
    fs.writeFileSync(
      file,
      JSON.stringify([{ name: 'Imported', trigger: { path: 'imported', methods: ['GET'] }, active: true }]),
    );
    const imported = await runCli(['workflows', 'import', file], { HOOKFLOW_DATA_DIR: dataDir });
    expect(imported.code).toBe(0);
    expect(imported.stderr).toContain('Imported "Imported"');

    const exported = await runCli(['workflows', 'export'], { HOOKFLOW_DATA_DIR: dataDir });
    expect(exported.code).toBe(0);
    const { items } = JSON.parse(exported.stdout);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      name: 'Imported',
      active: true,
      trigger: { path: 'imported', methods: ['GET'] },
    });

    // Importing the export again replaces by id instead of duplicating.
    const out = path.join(dataDir, 'out.json');
    fs.writeFileSync(out, exported.stdout);
    expect((await runCli(['workflows', 'import', out], { HOOKFLOW_DATA_DIR: dataDir })).code).toBe(0);
    const again = JSON.parse((await runCli(['workflows', 'export'], { HOOKFLOW_DATA_DIR: dataDir })).stdout);
    expect(again.items).toHaveLength(1);
    expect(again.items[0].version).toBe(2);
  });

  it('exports and imports workflows with nested steps (SPEC 7b) unchanged; a bad nested step is refused with its pointer', async () => {
    const dataDir = tempDir();
    const steps = [
      {
        type: 'switch',
        name: 'route',
        value: '{{ headers."x-github-event" }}',
        cases: [
          {
            equals: 'push',
            steps: [
              {
                type: 'forEach',
                name: 'commits',
                items: '{{ body.commits }}',
                steps: [
                  { type: 'code', name: 'msg', source: 'return { m: $input.message, i: "{{ kept }}" }' },
                ],
              },
            ],
          },
          { when: '{{ true }}', steps: [{ type: 'wait', name: 'later', seconds: 60 }] },
        ],
        default: [{ type: 'fail', name: 'nope', message: 'no route' }],
      },
    ];
    const file = path.join(dataDir, 'nested.json');
    fs.writeFileSync(file, JSON.stringify([{ name: 'Nested', trigger: { path: 'nested' }, steps }]));
    const imported = await runCli(['workflows', 'import', file], { HOOKFLOW_DATA_DIR: dataDir });
    expect(imported.code).toBe(0);
    const exported = await runCli(['workflows', 'export'], { HOOKFLOW_DATA_DIR: dataDir });
    expect(JSON.parse(exported.stdout).items[0].steps).toEqual(steps);

    const bad = path.join(dataDir, 'bad.json');
    const broken = JSON.parse(JSON.stringify(steps).replace('return { m: $input.message', 'return +('));
    fs.writeFileSync(bad, JSON.stringify([{ name: 'Bad', trigger: { path: 'bad' }, steps: broken }]));
    const refused = await runCli(['workflows', 'import', bad], { HOOKFLOW_DATA_DIR: dataDir });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('/steps/0/cases/0/steps/0/steps/0/source');
  });

  it('round-trips a draft ahead of production: the published content stays live, the draft stays a draft', async () => {
    const dataDir = tempDir();
    const file = path.join(dataDir, 'in.json');
    const id = '01a1fffd-0000-7000-8000-0000000000c1';
    const entry = (value: string, active: boolean) => ({
      id,
      name: 'Drafted',
      trigger: { path: 'drafted' },
      steps: [{ name: 'v', type: 'set', fields: { value } }],
      active,
    });
    const importFile = async (dir: string, content: unknown) => {
      fs.writeFileSync(file, JSON.stringify(content));
      const ran = await runCli(['workflows', 'import', file], { HOOKFLOW_DATA_DIR: dir });
      expect(ran.code, ran.stderr).toBe(0);
    };
    const exportAll = async (dir: string) =>
      JSON.parse((await runCli(['workflows', 'export'], { HOOKFLOW_DATA_DIR: dir })).stdout).items;

    await importFile(dataDir, [entry('live', true)]);
    // Imported again without "active": a new version that is only a draft.
    await importFile(dataDir, [entry('draft', false)]);
    const [exported] = await exportAll(dataDir);
    expect(exported).toMatchObject({ active: true, version: 2, publishedVersion: 1 });
    expect(exported.steps[0].fields.value).toBe('draft');
    expect(exported.published.steps[0].fields.value).toBe('live');

    const other = tempDir();
    await importFile(other, [exported]);
    const [copy] = await exportAll(other);
    expect(copy).toMatchObject({ id, active: true, version: 2, publishedVersion: 1 });
    expect(copy.steps[0].fields.value).toBe('draft');
    expect(copy.published.steps[0].fields.value).toBe('live');
  });
});
