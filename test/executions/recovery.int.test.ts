/**
 * At-least-once (SPEC 10): executions a stopped process left `queued` or `running` are resumed on
 * the next start; a `running` one restarts from its first step as attempt 2. (A real SIGKILL of
 * the process is exercised in test/durability.)
 */
import { afterAll, expect, it } from 'vitest';
import { newId } from '../../src/ids.js';
import { finishedExecution } from '../engine/int-helpers.js';
import { createActiveWorkflow, startTestServer, type TestServer, tempDir } from '../helpers/server.js';

const dataDir = tempDir();
let server: TestServer | undefined;

afterAll(async () => {
  await server?.close();
});

it('resumes queued and running executions left by a stopped process', async () => {
  // A process that accepted work but runs no executions, then stops: its rows stay as they were.
  const first = await startTestServer({ dataDir, roles: { http: true, worker: false } });
  const wf = await createActiveWorkflow(first, {
    name: 'resume',
    trigger: { path: 'resume' },
    steps: [
      {
        name: 'shape',
        type: 'set',
        fields: { got: '{{ body.param1 }}', attempt: '{{ $execution.attempt }}' },
      },
    ],
  });
  const now = new Date();
  const item = (param1: string) =>
    JSON.stringify({
      method: 'POST',
      path: 'resume',
      params: {},
      query: {},
      headers: {},
      body: { param1 },
      files: [],
      webhookUrl: 'http://hookflow.test/webhook/resume',
      executionMode: 'production',
      receivedAt: now.toISOString(),
    });
  const row = (id: string, status: 'queued' | 'running', param1: string) => ({
    id,
    workflow_id: wf.id,
    workflow_version: wf.version,
    mode: 'production' as const,
    status,
    trigger: item(param1),
    // A crashed attempt may have recorded nothing, or anything: the next attempt starts over.
    steps: '[]',
    error: null,
    attempt: 1,
    retry_of: null,
    run_after: now.toISOString(),
    // Still leased to the dead process for 10 minutes.
    locked_until: status === 'running' ? new Date(now.getTime() + 600_000).toISOString() : null,
    locked_by: status === 'running' ? 'gone-host:1234:dead' : null,
    created_at: now.toISOString(),
    started_at: status === 'running' ? now.toISOString() : null,
    finished_at: null,
  });
  const runningId = newId();
  const queuedId = newId();
  await first.hookflow.store.db
    .insertInto('executions')
    .values([row(runningId, 'running', 'was-running'), row(queuedId, 'queued', 'was-queued')])
    .execute();
  await first.close();

  server = await startTestServer({ dataDir });
  const running = await finishedExecution(server, runningId);
  expect(running).toMatchObject({ status: 'succeeded', attempt: 2 });
  expect(running.steps).toHaveLength(1);
  expect(running.steps[0].output).toEqual({ got: 'was-running', attempt: 2 });

  const queued = await finishedExecution(server, queuedId);
  expect(queued).toMatchObject({ status: 'succeeded', attempt: 1 });
  expect(queued.steps[0].output).toEqual({ got: 'was-queued', attempt: 1 });
});
