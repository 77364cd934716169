/**
 * Error workflows (SPEC 7c, issue 19): a failed production execution queues one execution of its
 * `settings.errorWorkflowId` workflow, mode `error`, with the failure item; the two executions link
 * both ways; the error workflow runs although it is not active; its own failure starts nothing
 * (no loop); a pure workflow failing before its commit starts it too; test runs do not; unknown
 * and self references are refused on save.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.js';
import { MAX_ATTEMPTS } from '../../src/queue/queue.js';
import { finishedExecution } from '../engine/int-helpers.js';
import {
  createActiveWorkflow,
  createWorkflow,
  eventually,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';

let server: TestServer;
let receiver: http.Server;
let receiverUrl = '';
const received: { path: string; body: unknown }[] = [];

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      received.push({ path, body: text ? JSON.parse(text) : null });
      res.statusCode = path.startsWith('/broken') ? 500 : 200;
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
});

/** An error workflow that posts the item it got to the receiver at `path`. */
const notifier = (name: string, path: string, settings?: Record<string, unknown>) =>
  createWorkflow(server, {
    name,
    ...(settings ? { settings } : {}),
    steps: [{ name: 'notify', type: 'http', method: 'POST', url: `${receiverUrl}${path}`, body: '{{ $ }}' }],
  });

const failing = (name: string, path: string, errorWorkflowId: string) =>
  createActiveWorkflow(server, {
    name,
    trigger: { path },
    settings: { errorWorkflowId },
    steps: [{ name: 'call api', type: 'http', method: 'POST', url: `${receiverUrl}/broken/${path}` }],
  });

const fire = async (path: string, test = false) => {
  const res = await fetch(`${server.url}/${test ? 'webhook-test' : 'webhook'}/${path}`, { method: 'POST' });
  return ((await res.json()) as { executionId: string }).executionId as string;
};

const errorExecutionsOf = async (workflowId: string) =>
  (await server.api('GET', `/api/v1/executions?workflowId=${workflowId}&mode=error`)).body.items;

describe.each([
  { dialect: 'sqlite', postgres: false },
  { dialect: 'postgres', postgres: true },
])('error workflows on $dialect', ({ postgres }) => {
  beforeAll(async () => {
    // The blocks run one after the other: each starts with an empty receiver log.
    received.length = 0;
    server = await startTestServer({ postgres, env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
  });
  afterAll(() => server?.close());

  it('queues one error execution with the failure item, linked both ways, though the error workflow is not active', async () => {
    const handler = await notifier('on failure', '/alerts');
    expect(handler.active).toBe(false);
    const wf = await failing('orders sync', 'orders-sync', handler.id);
    expect(wf.settings).toEqual({ errorWorkflowId: handler.id });

    const failed = await finishedExecution(server, await fire('orders-sync'));
    expect(failed.status).toBe('failed');
    const linked = await eventually(async () => {
      const e = (await server.api('GET', `/api/v1/executions/${failed.id}`)).body;
      return e.errorExecutionId ? e : undefined;
    });
    const errorExecution = await finishedExecution(server, linked.errorExecutionId);
    expect(errorExecution).toMatchObject({
      workflowId: handler.id,
      workflowVersion: 1,
      mode: 'error',
      status: 'succeeded',
      errorExecutionId: null,
    });
    expect(errorExecution.trigger).toEqual({
      error: { message: expect.stringContaining('answered 500'), step: 'call api' },
      execution: {
        id: failed.id,
        workflowId: wf.id,
        workflowName: 'orders sync',
        mode: 'production',
        attempt: 1,
      },
      receivedAt: expect.any(String),
    });
    // The error workflow's step got the item.
    const alert = received.filter((r) => r.path === '/alerts');
    expect(alert).toHaveLength(1);
    expect(alert[0]!.body).toEqual(errorExecution.trigger);

    // mode=error lists it; production does not.
    expect((await errorExecutionsOf(handler.id)).map((e: { id: string }) => e.id)).toEqual([
      errorExecution.id,
    ]);
    const production = await server.api('GET', `/api/v1/executions?workflowId=${handler.id}&mode=production`);
    expect(production.body.items).toEqual([]);

    // Once per failure: a second failure starts a second one, never more.
    await finishedExecution(server, await fire('orders-sync'));
    await eventually(async () => ((await errorExecutionsOf(handler.id)).length === 2 ? true : undefined));
    await new Promise((r) => setTimeout(r, 300));
    expect(await errorExecutionsOf(handler.id)).toHaveLength(2);
  });

  it('runs the published version of the error workflow when it has one', async () => {
    const handler = await notifier('published handler', '/published-v1');
    await server.api('POST', `/api/v1/workflows/${handler.id}/publish`);
    await server.api('PATCH', `/api/v1/workflows/${handler.id}`, {
      steps: [
        { name: 'notify', type: 'http', method: 'POST', url: `${receiverUrl}/draft-v2`, body: '{{ $ }}' },
      ],
    });
    await failing('uses published handler', 'published-handler', handler.id);
    await finishedExecution(server, await fire('published-handler'));
    const [errorExecution] = await eventually(async () => {
      const items = await errorExecutionsOf(handler.id);
      return items.length > 0 ? items : undefined;
    });
    expect((await finishedExecution(server, errorExecution.id)).workflowVersion).toBe(1);
    expect(received.some((r) => r.path === '/published-v1')).toBe(true);
    expect(received.some((r) => r.path === '/draft-v2')).toBe(false);
  });

  it('starts nothing more when the error execution fails (no loop)', async () => {
    const last = await notifier('last resort', '/last-resort');
    // The error workflow fails itself, and names an error workflow of its own.
    const broken = await notifier('broken handler', '/broken-handler', { errorWorkflowId: last.id });
    await failing('fails into a broken handler', 'into-broken', broken.id);

    await finishedExecution(server, await fire('into-broken'));
    const [errorExecution] = await eventually(async () => {
      const items = await errorExecutionsOf(broken.id);
      return items.length > 0 ? items : undefined;
    });
    const done = await finishedExecution(server, errorExecution.id);
    expect(done.status).toBe('failed');
    await new Promise((r) => setTimeout(r, 500));
    expect(done.errorExecutionId).toBeNull();
    expect(
      (await server.api('GET', `/api/v1/executions/${errorExecution.id}`)).body.errorExecutionId,
    ).toBeNull();
    expect(await errorExecutionsOf(last.id)).toEqual([]);
    expect(received.some((r) => r.path === '/last-resort')).toBe(false);
  });

  it('a pure workflow failing before its commit starts it too; a test run does not', async () => {
    const handler = await notifier('pure handler', '/pure-alerts');
    const wf = await createActiveWorkflow(server, {
      name: 'pure failure',
      trigger: { path: 'pure-failure' },
      settings: { errorWorkflowId: handler.id },
      steps: [{ name: 'compute', type: 'set', fields: { x: '{{ $error("no total") }}' } }],
    });
    const failed = await finishedExecution(server, await fire('pure-failure'));
    expect(failed.status).toBe('failed');
    const linked = await eventually(async () => {
      const e = (await server.api('GET', `/api/v1/executions/${failed.id}`)).body;
      return e.errorExecutionId ? e : undefined;
    });
    const errorExecution = await finishedExecution(server, linked.errorExecutionId);
    expect(errorExecution.trigger.error).toEqual({
      message: expect.stringContaining('no total'),
      step: 'compute',
    });

    // Test mode: a failure starts nothing.
    await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, {});
    const testRun = await finishedExecution(server, await fire('pure-failure', true));
    expect(testRun).toMatchObject({ mode: 'test', status: 'failed' });
    await new Promise((r) => setTimeout(r, 300));
    expect((await server.api('GET', `/api/v1/executions/${testRun.id}`)).body.errorExecutionId).toBeNull();
    expect(await errorExecutionsOf(handler.id)).toHaveLength(1);
  });

  it('an execution the queue gives up on (every attempt crashed) starts it too', async () => {
    const handler = await notifier('crash handler', '/crash-alerts');
    const wf = await failing('crashes', 'crashes', handler.id);
    // What a worker that died on the last allowed attempt leaves behind: a `running` row whose lease
    // lapsed. The queue's recovery fails it (it does not run a sixth time).
    const id = newId();
    const past = new Date(Date.now() - 60_000).toISOString();
    await server.hookflow.store.db
      .insertInto('executions')
      .values({
        id,
        workflow_id: wf.id,
        workflow_version: wf.publishedVersion ?? wf.version,
        mode: 'production',
        status: 'running',
        trigger: JSON.stringify({ body: { order: 7 } }),
        steps: '[]',
        attempt: MAX_ATTEMPTS,
        run_after: past,
        created_at: past,
        started_at: past,
        locked_by: 'a worker that died',
        locked_until: past,
      })
      .execute();
    const linked = await eventually(async () => {
      const e = (await server.api('GET', `/api/v1/executions/${id}`)).body;
      return e.errorExecutionId ? e : undefined;
    }, 15_000);
    expect(linked.status).toBe('failed');
    expect(linked.error.message).toMatch(/^Gave up after 5 attempts/);
    const errorExecution = await finishedExecution(server, linked.errorExecutionId);
    expect(errorExecution.trigger).toEqual({
      error: { message: linked.error.message, step: null },
      execution: {
        id,
        workflowId: wf.id,
        workflowName: 'crashes',
        mode: 'production',
        attempt: MAX_ATTEMPTS,
      },
      receivedAt: expect.any(String),
    });
    expect(received.filter((r) => r.path === '/crash-alerts')).toHaveLength(1);
  });

  it("docs/error-workflows.md's Slack example works as written (Slack stood in for by the receiver)", async () => {
    const doc = fs.readFileSync(new URL('../../docs/error-workflows.md', import.meta.url), 'utf8');
    const json = /<<'JSON'\n([\s\S]*?)\nJSON/
      .exec(doc)![1]!
      .replace('https://hooks.slack.com/services/T000/B000/XXXX', `${receiverUrl}/slack`);
    const res = await server.api('POST', '/api/v1/workflows', JSON.parse(json));
    expect(res.status).toBe(201);
    await failing('watched by slack', 'watched-by-slack', res.body.id);
    const failed = await finishedExecution(server, await fire('watched-by-slack'));
    const posted = await eventually(async () => received.find((r) => r.path === '/slack'));
    const body = posted.body as {
      text: string;
      blocks: { text?: { text: string }; elements?: { text: string }[] }[];
    };
    expect(body.text).toContain('*watched by slack* failed at step `call api`: ');
    expect(body.text).toContain('answered 500');
    expect(body.blocks[0]!.text!.text).toContain('\n>');
    expect(body.blocks[1]!.elements![0]!.text).toContain(`Execution \`${failed.id}\` · attempt 1 · `);
  });

  it('refuses an unknown error workflow and the workflow itself, and clears with null', async () => {
    const unknown = await server.api('POST', '/api/v1/workflows', {
      name: 'unknown handler',
      settings: { errorWorkflowId: '0190a0b0-0000-7000-8000-000000000000' },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('validation_failed');
    expect(unknown.body.fields).toContainEqual(
      expect.objectContaining({ field: '/settings/errorWorkflowId' }),
    );

    const wf = await createWorkflow(server, { name: 'self' });
    const self = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      settings: { errorWorkflowId: wf.id },
    });
    expect(self.status).toBe(400);
    expect(self.body.fields).toContainEqual(expect.objectContaining({ field: '/settings/errorWorkflowId' }));

    const other = await createWorkflow(server, { name: 'other' });
    const set = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      settings: { errorWorkflowId: other.id },
    });
    expect(set.body.settings).toEqual({ errorWorkflowId: other.id });
    // PUT without settings keeps them; null clears.
    const put = await server.api('PUT', `/api/v1/workflows/${wf.id}`, { name: 'self' });
    expect(put.body.settings).toEqual({ errorWorkflowId: other.id });
    const cleared = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      settings: { errorWorkflowId: null },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.settings).toEqual({});

    const bad = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, { settings: { retries: 3 } });
    expect(bad.status).toBe(400);
  });
});
