/**
 * Sub-workflows (SPEC 7f) over HTTP, on SQLite and PostgreSQL: a `workflow` step runs the target's
 * published version as a `sub` execution with the item {body, parent}, waits for it holding no
 * slot (`waiting`), outputs its last output or fails with its error; `wait: false` answers the
 * child's id at once; a test run runs the target's draft; the two executions link both ways; the
 * depth limit; a workflow naming itself, or an unknown one, is refused on save.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishedExecution } from '../engine/int-helpers.js';
import {
  createActiveWorkflow,
  createWorkflow,
  eventually,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';

describe.each([
  { dialect: 'sqlite', postgres: false },
  { dialect: 'postgres', postgres: true },
])('sub-workflows on $dialect', ({ postgres }) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ postgres });
  });

  afterAll(async () => {
    await server?.close();
  });

  /** A published (not active) workflow: a callee. */
  async function callee(name: string, steps: unknown[]) {
    const wf = await createWorkflow(server, { name, steps });
    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/publish`)).status).toBe(200);
    // Published activates too; a callee need not be active.
    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/deactivate`)).status).toBe(200);
    return wf as { id: string };
  }

  async function fire(path: string, body: unknown = {}) {
    const res = await fetch(`${server.url}/webhook/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return res.headers.get('x-hookflow-execution-id')!;
  }

  it('waits for the child, outputs its last output, and the executions link both ways', async () => {
    const child = await callee('double', [
      { name: 'double', type: 'set', fields: { doubled: '{{ body.n * 2 }}', parent: '{{ parent }}' } },
    ]);
    const caller = await createActiveWorkflow(server, {
      name: 'caller',
      trigger: { path: 'caller' },
      steps: [
        { name: 'call', type: 'workflow', workflowId: child.id, input: { n: '{{ body.n }}' } },
        { name: 'after', type: 'set', fields: { got: '{{ $.doubled }}' } },
      ],
    });
    const id = await fire('caller', { n: 21 });
    const parent = await finishedExecution(server, id);
    expect(parent.status).toBe('succeeded');
    const call = parent.steps[0];
    expect(call.type).toBe('workflow');
    expect(call.output).toEqual({
      doubled: 42,
      parent: { executionId: id, workflowId: caller.id, step: 'call' },
    });
    expect(parent.steps[1].output).toEqual({ got: 42 });
    const childId = call.childExecutionId as string;
    const sub = (await server.api('GET', `/api/v1/executions/${childId}`)).body;
    expect(sub).toMatchObject({
      mode: 'sub',
      status: 'succeeded',
      workflowId: child.id,
      parentExecutionId: id,
      trigger: { body: { n: 21 }, parent: { executionId: id, workflowId: caller.id, step: 'call' } },
    });
    expect(parent.parentExecutionId).toBeNull();
    const listed = await server.api('GET', `/api/v1/executions?workflowId=${child.id}&mode=sub`);
    expect(listed.body.items.map((e: { id: string }) => e.id)).toEqual([childId]);
  });

  it('the caller is waiting while its child runs, holding no slot', async () => {
    const slow = await callee('slow', [{ name: 'pause', type: 'wait', seconds: 2 }]);
    await createActiveWorkflow(server, {
      name: 'slow caller',
      trigger: { path: 'slow-caller' },
      steps: [{ name: 'call', type: 'workflow', workflowId: slow.id, input: 'x' }],
    });
    const id = await fire('slow-caller');
    const waiting = await eventually(async () => {
      const e = (await server.api('GET', `/api/v1/executions/${id}`)).body;
      return e.status === 'waiting' && e.steps[0]?.childExecutionId ? e : undefined;
    });
    expect(waiting.steps[0].status).toBe('waiting');
    const done = await finishedExecution(server, id, 15_000);
    expect(done.status).toBe('succeeded');
    expect(done.steps[0].output).toEqual({ body: 'x', parent: expect.any(Object) });
  });

  it('a failed child fails the step with its error; wait: false answers the child id at once', async () => {
    const broken = await callee('broken', [
      { name: 'boom', type: 'fail', message: 'no stock for {{ body }}' },
    ]);
    await createActiveWorkflow(server, {
      name: 'failing caller',
      trigger: { path: 'failing-caller' },
      steps: [{ name: 'call', type: 'workflow', workflowId: broken.id, input: 'sku-1' }],
    });
    const failed = await finishedExecution(server, await fire('failing-caller'));
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ step: 'call', message: 'no stock for sku-1' });
    expect(failed.steps[0].childExecutionId).toEqual(expect.any(String));

    await createActiveWorkflow(server, {
      name: 'fire and forget',
      trigger: { path: 'forget' },
      steps: [{ name: 'call', type: 'workflow', workflowId: broken.id, input: 'sku-2', wait: false }],
    });
    const forgot = await finishedExecution(server, await fire('forget'));
    expect(forgot.status).toBe('succeeded');
    const childId = forgot.steps[0].output.executionId;
    expect(forgot.steps[0].childExecutionId).toBe(childId);
    expect((await finishedExecution(server, childId)).status).toBe('failed');
  });

  it('a test run runs the callee’s draft; production its published version', async () => {
    const wf = await callee('versions', [{ name: 'v', type: 'set', fields: { v: 'published' } }]);
    expect(
      (
        await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
          steps: [{ name: 'v', type: 'set', fields: { v: 'draft' } }],
        })
      ).status,
    ).toBe(200);
    const caller = await createActiveWorkflow(server, {
      name: 'version caller',
      trigger: { path: 'version-caller' },
      steps: [{ name: 'call', type: 'workflow', workflowId: wf.id }],
    });
    expect((await finishedExecution(server, await fire('version-caller'))).steps[0].output).toEqual({
      v: 'published',
    });
    expect((await server.api('POST', `/api/v1/workflows/${caller.id}/test-listener`)).status).toBe(201);
    const test = await fetch(`${server.url}/webhook-test/version-caller`, { method: 'POST' });
    const testId = test.headers.get('x-hookflow-execution-id')!;
    expect((await finishedExecution(server, testId)).steps[0].output).toEqual({ v: 'draft' });
  });

  it('nesting deeper than 10 fails with sub_workflow_depth', async () => {
    // A chain of 12 workflows, each calling the next: the 11th level cannot start.
    let next: string | undefined;
    for (let level = 12; level >= 1; level--) {
      const steps = next
        ? [{ name: `call ${level}`, type: 'workflow', workflowId: next }]
        : [{ name: 'end', type: 'set', fields: { level } }];
      next = (await callee(`level ${level}`, steps)).id;
    }
    await createActiveWorkflow(server, {
      name: 'deep',
      trigger: { path: 'deep' },
      steps: [{ name: 'call 0', type: 'workflow', workflowId: next }],
    });
    const failed = await finishedExecution(server, await fire('deep'), 60_000);
    expect(failed.status).toBe('failed');
    expect(failed.error.code).toBe('sub_workflow_depth');
    // Ten sub-workflow executions ran (depths 1 … 10), and the 10th failed on its step.
    const subs = await server.api('GET', '/api/v1/executions?mode=sub&status=failed&limit=200');
    const deepest = subs.body.items.filter(
      (e: { error: { code?: string } | null }) => e.error?.code === 'sub_workflow_depth',
    );
    expect(deepest.length).toBeGreaterThanOrEqual(1);
  }, 90_000);

  it('refuses, on save, a workflow step naming its own workflow or an unknown one', async () => {
    const wf = await createWorkflow(server, { name: 'self' });
    const self = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      steps: [{ name: 'again', type: 'workflow', workflowId: wf.id }],
    });
    expect(self.status).toBe(400);
    expect(self.body.fields).toEqual([
      {
        field: '/steps/0/workflowId',
        message: 'names this workflow itself; a workflow step runs another workflow',
      },
    ]);
    const unknown = await server.api('POST', '/api/v1/workflows', {
      name: 'unknown',
      steps: [
        {
          name: 'x',
          type: 'if',
          condition: '{{ true }}',
          then: [{ name: 'call', type: 'workflow', workflowId: 'nope' }],
        },
      ],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.fields).toEqual([
      { field: '/steps/0/then/0/workflowId', message: 'names workflow "nope", which does not exist' },
    ]);
  });
});
