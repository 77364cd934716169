import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/process.js';
import {
  createActiveWorkflow,
  eventually,
  json,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';

let server: TestServer;
let executionId: string;
beforeAll(async () => {
  server = await startTestServer();
  await createActiveWorkflow(server, {
    trigger: { path: 'cli-exec' },
    steps: [{ name: 'double', type: 'set', fields: { twice: '{{ $number(body.n) * 2 }}' } }],
  });
  executionId = (
    await json(
      await fetch(`${server.url}/webhook/cli-exec`, {
        method: 'POST',
        body: new URLSearchParams({ n: '21' }),
      }),
    )
  ).executionId;
  await eventually(
    async () => (await server.api('GET', `/api/v1/executions/${executionId}`)).body.status === 'succeeded',
  );
});
afterAll(() => server.close());

const cli = (...args: string[]) =>
  runCli(['executions', ...args, '--url', server.url], { HOOKFLOW_TOKEN: server.token });

describe('hookflow executions', () => {
  it('lists executions', async () => {
    const ran = await cli('list', '--status', 'succeeded');
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain(executionId);
    expect(ran.stdout).toContain('succeeded');
  });

  it("shows an execution with its item and each step's output", async () => {
    const ran = await cli('show', executionId);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain('"n": "21"');
    expect(ran.stdout).toContain('Step "double" (set): succeeded');
    expect(ran.stdout).toContain('"twice": 42');
  });

  it('replays and retries into new executions', async () => {
    for (const sub of ['replay', 'retry']) {
      const ran = await cli(sub, executionId);
      expect(ran.code).toBe(0);
      const newId = ran.stdout.trim();
      expect(newId).not.toBe(executionId);
      const res = await server.api('GET', `/api/v1/executions/${newId}`);
      expect(res.status).toBe(200);
    }
  });

  it('replay --target draft runs the draft in test mode; the default runs the published version', async () => {
    const wf = (await server.api('GET', `/api/v1/executions/${executionId}`)).body.workflowId;
    const draft = await server.api('PATCH', `/api/v1/workflows/${wf}`, {
      steps: [{ name: 'double', type: 'set', fields: { twice: '{{ $number(body.n) * 3 }}' } }],
    });
    expect(draft.status).toBe(200);
    const runs: Record<string, { workflowVersion: number; mode: string; output: unknown }> = {};
    for (const target of ['draft', 'published']) {
      const ran = await cli('replay', executionId, '--target', target);
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stderr).toContain(`into the ${target} version`);
      const e = await eventually(async () => {
        const res = await server.api('GET', `/api/v1/executions/${ran.stdout.trim()}`);
        return res.body.status === 'succeeded' && res.body;
      });
      runs[target] = { workflowVersion: e.workflowVersion, mode: e.mode, output: e.steps[0].output };
    }
    expect(runs.draft).toEqual({ workflowVersion: draft.body.version, mode: 'test', output: { twice: 63 } });
    expect(runs.published).toEqual({
      workflowVersion: draft.body.publishedVersion,
      mode: 'production',
      output: { twice: 42 },
    });
    const bad = await cli('replay', executionId, '--target', 'live');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--target must be "published" or "draft"');
  });

  it('explains an unknown id and a missing token', async () => {
    const unknown = await cli('show', '01a1fffd-0000-7000-8000-000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('There is no execution');
    const noToken = await runCli(['executions', 'list', '--url', server.url], { HOOKFLOW_TOKEN: '' });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('hookflow tokens create');
  });
});
