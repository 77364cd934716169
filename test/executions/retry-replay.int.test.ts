/**
 * POST /executions/:id/retry (same item, same version, linked by retryOf) and
 * POST /executions/:id/replay (the stored item, test or production, into the published version in
 * production mode — the default — or into the draft in test mode; SPEC 7/8).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORM, finishedExecution } from '../engine/int-helpers.js';
import { createActiveWorkflow, createWorkflow, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let workflowId: string;
let failedId: string;

const steps = (version: string) => [
  { name: 'check', type: 'set', fields: { v: `${version} {{ body.param1 }}` } },
  ...(version === 'v1' ? [{ name: 'boom', type: 'set', fields: { x: '{{ $error("not yet") }}' } }] : []),
];

beforeAll(async () => {
  server = await startTestServer();
  workflowId = (
    await createActiveWorkflow(server, { name: 'flaky', trigger: { path: 'flaky' }, steps: steps('v1') })
  ).id;
  const res = await fetch(`${server.url}/webhook/flaky`, { method: 'POST', headers: FORM, body: 'param1=a' });
  failedId = res.headers.get('x-hookflow-execution-id')!;
  expect((await finishedExecution(server, failedId)).status).toBe('failed');
});

afterAll(async () => {
  await server?.close();
});

describe('retry', () => {
  it('runs the same item through the same version as a new execution linked by retryOf', async () => {
    // The workflow has moved on to a version that would succeed; a retry still runs version 1.
    const saved = await server.api('PUT', `/api/v1/workflows/${workflowId}`, {
      name: 'flaky',
      trigger: { path: 'flaky' },
      steps: steps('v2'),
    });
    expect(saved.status).toBe(200);

    const res = await server.api('POST', `/api/v1/executions/${failedId}/retry`);
    expect(res.status).toBe(202);
    expect(res.body.executionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.executionId).not.toBe(failedId);

    const old = await finishedExecution(server, failedId);
    const retried = await finishedExecution(server, res.body.executionId);
    expect(retried).toMatchObject({
      retryOf: failedId,
      workflowVersion: 1,
      mode: 'production',
      attempt: 1,
      status: 'failed',
    });
    expect(retried.trigger).toEqual(old.trigger);
    expect(retried.error).toMatchObject({ step: 'boom' });
    // And back: the failed execution names its retries.
    expect(old.retries).toEqual([res.body.executionId]);
    expect(retried.retries).toEqual([]);
  });

  it('answers 404 for an unknown execution', async () => {
    const res = await server.api('POST', '/api/v1/executions/0190aaaa-0000-7000-8000-000000000000/retry');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });
});

describe('replay', () => {
  it("runs a production execution's item through the published version; once v2 is published, through v2", async () => {
    // The retry test saved v2 as a draft: production (and so the default replay) still runs v1.
    const before = await server.api('POST', `/api/v1/executions/${failedId}/replay`);
    expect(before.status).toBe(202);
    expect(await finishedExecution(server, before.body.executionId)).toMatchObject({
      workflowVersion: 1,
      mode: 'production',
      status: 'failed',
      retryOf: null,
    });

    expect((await server.api('POST', `/api/v1/workflows/${workflowId}/publish`)).body.publishedVersion).toBe(
      2,
    );
    const res = await server.api('POST', `/api/v1/executions/${failedId}/replay`);
    expect(res.status).toBe(202);
    const replayed = await finishedExecution(server, res.body.executionId);
    expect(replayed).toMatchObject({
      workflowVersion: 2,
      mode: 'production',
      status: 'succeeded',
      retryOf: null,
    });
    expect(replayed.steps.at(-1).output).toEqual({ v: 'v2 a' });
  });

  it("runs a test execution's item through the draft, in test mode (never published: no published target)", async () => {
    const wf = await createWorkflow(server, {
      name: 'drafting',
      trigger: { path: 'drafting' },
      steps: steps('v1'),
    });
    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, {})).status).toBe(201);
    const call = await fetch(`${server.url}/webhook-test/drafting`, {
      method: 'POST',
      headers: FORM,
      body: 'param1=t',
    });
    const testId = call.headers.get('x-hookflow-execution-id')!;
    const original = await finishedExecution(server, testId);
    expect(original).toMatchObject({ mode: 'test', status: 'failed' });

    await server.api('PATCH', `/api/v1/workflows/${wf.id}`, { steps: steps('v2') });
    const refused = await server.api('POST', `/api/v1/executions/${testId}/replay`);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('not_published');
    const res = await server.api('POST', `/api/v1/executions/${testId}/replay`, { target: 'draft' });
    expect(res.status).toBe(202);
    const replayed = await finishedExecution(server, res.body.executionId);
    expect(replayed).toMatchObject({ mode: 'test', workflowVersion: 2, status: 'succeeded' });
    expect(replayed.trigger).toEqual(original.trigger);
    expect(replayed.steps.at(-1).output).toEqual({ v: 'v2 t' });
  });

  it('answers 404 when the workflow is gone', async () => {
    const wf = await createActiveWorkflow(server, { name: 'doomed', trigger: { path: 'doomed' } });
    const call = await fetch(`${server.url}/webhook/doomed`, { method: 'POST', headers: FORM, body: 'a=1' });
    const id = call.headers.get('x-hookflow-execution-id')!;
    await finishedExecution(server, id);
    expect((await server.api('DELETE', `/api/v1/workflows/${wf.id}`)).status).toBe(204);
    for (const action of ['replay', 'retry']) {
      const res = await server.api('POST', `/api/v1/executions/${id}/${action}`);
      expect(res.status).toBe(404);
      expect(res.body.message).toContain('no longer exists');
    }
  });
});
