/**
 * FIELD-NOTES 2: registrations survive a restart. Server A registers an active workflow and opens a
 * test listener; B starts on the same data dir and serves both URLs with no action by anyone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  createActiveWorkflow,
  createWorkflow,
  startTestServer,
  type TestServer,
  tempDir,
} from '../helpers/server.js';
import { expectError, getExecution } from './webhook-http.js';

const servers: TestServer[] = [];

afterAll(async () => {
  for (const server of servers) await server.close();
});

function post(server: TestServer, url: string, body: string): Promise<Response> {
  return fetch(`${server.url}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
}

describe('after a restart', () => {
  it('serves every active production URL and every open test listener until its deadline', async () => {
    const dataDir = tempDir();
    const a = await startTestServer({ dataDir });
    servers.push(a);
    const active = await createActiveWorkflow(a, { name: 'active', trigger: { path: 'orders/:id' } });
    const second = await createActiveWorkflow(a, {
      name: 'second',
      trigger: { path: 'ping', methods: ['GET'] },
    });
    const inactive = await createWorkflow(a, { name: 'inactive', trigger: { path: 'sleepy' } });
    const listening = await createWorkflow(a, { name: 'listening', trigger: { path: 'setup/hook' } });
    const opened = await a.api('POST', `/api/v1/workflows/${listening.id}/test-listener`, {
      timeoutSeconds: 60,
    });
    expect(opened.status).toBe(201);
    expect((await post(a, '/webhook/orders/1', 'before=1')).status).toBe(200);
    await a.close();

    const b = await startTestServer({ dataDir });
    servers.push(b);

    const prod = await post(b, '/webhook/orders/42', 'after=1');
    expect(prod.status).toBe(200);
    const prodRun = await getExecution(b, prod.headers.get('x-hookflow-execution-id')!);
    expect(prodRun).toMatchObject({
      workflowId: active.id,
      mode: 'production',
      trigger: { params: { id: '42' }, body: { after: '1' } },
    });
    const ping = await fetch(`${b.url}/webhook/ping?x=1`);
    expect(ping.status).toBe(200);
    expect((await getExecution(b, ping.headers.get('x-hookflow-execution-id')!)).workflowId).toBe(second.id);

    // Still not registered: a restart activates nothing.
    await expectError(await post(b, '/webhook/sleepy', 'a=1'), 404, 'webhook_not_registered');
    expect((await b.api('GET', `/api/v1/workflows/${inactive.id}`)).body.active).toBe(false);

    const state = await b.api('GET', `/api/v1/workflows/${listening.id}/test-listener`);
    expect(state.body).toMatchObject({
      listening: true,
      listener: { listenerId: opened.body.listenerId, expiresAt: opened.body.expiresAt },
    });
    const capture = await post(b, '/webhook-test/setup/hook', 'param1=restarted');
    expect(capture.status).toBe(200);
    const testRun = await getExecution(b, capture.headers.get('x-hookflow-execution-id')!);
    expect(testRun).toMatchObject({
      workflowId: listening.id,
      mode: 'test',
      trigger: { body: { param1: 'restarted' } },
    });
    const events = await b.api('GET', `/api/v1/workflows/${listening.id}/test-events`);
    expect(events.body.items.map((e: { executionId: string }) => e.executionId)).toEqual([testRun.id]);

    // The execution accepted by A before the restart is still there.
    const all = await b.api('GET', `/api/v1/executions?workflowId=${active.id}`);
    expect(all.body.items.map((e: { trigger: { body: unknown } }) => e.trigger.body)).toEqual([
      { after: '1' },
      { before: '1' },
    ]);
  });

  it('does not revive a listener whose deadline passed while the server was down', async () => {
    const dataDir = tempDir();
    const a = await startTestServer({ dataDir });
    servers.push(a);
    const wf = await createWorkflow(a, { name: 'brief', trigger: { path: 'brief' } });
    expect(
      (await a.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, { timeoutSeconds: 1 })).status,
    ).toBe(201);
    await a.close();
    await new Promise((r) => setTimeout(r, 1100));

    const b = await startTestServer({ dataDir });
    servers.push(b);
    await expectError(await post(b, '/webhook-test/brief', 'a=1'), 404, 'test_webhook_not_listening');
  });
});
