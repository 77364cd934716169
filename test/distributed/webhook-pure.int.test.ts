/**
 * A `hookflow webhook` process runs workflows of pure steps itself, before their commit, as
 * `hookflow start` does (queue/entry.ts, issue 20): with no worker anywhere, their executions are
 * stored finished, a `lastStep` call is answered, and a failure queues its error workflow. Any
 * other workflow (a `code` step here) is stored queued for the workers, and so is every execution
 * with HOOKFLOW_INGEST_RUN_PURE=false.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, type RoleProcess, activeWorkflow, startCluster, within } from '../helpers/cluster.js';

const row = async (c: Cluster, id: string) =>
  (
    await c.sql.query('select status, mode, attempt, locked_by, steps, error from executions where id = $1', [
      id,
    ])
  ).rows[0];

const post = async (hook: RoleProcess, route: string) => {
  const res = await fetch(`${hook.url}${route}`, { method: 'POST' });
  return { status: res.status, executionId: res.headers.get('x-hookflow-execution-id')!, res };
};

describe('a webhook process with no worker', () => {
  let c: Cluster;
  let hook: RoleProcess;
  beforeAll(async () => {
    c = await startCluster({ webhooks: 1, workers: 0 });
    hook = c.webhooks[0]!;
  });
  afterAll(() => c?.close());

  it('runs a pure workflow before the commit: stored finished, answered with its last step', async () => {
    await activeWorkflow(c, {
      name: 'double',
      trigger: { path: 'double', response: { mode: 'lastStep', timeoutMs: 2_000 } },
      steps: [{ name: 'double', type: 'set', fields: { n: '{{ $number(query.n) * 2 }}' } }],
    });
    const { status, executionId, res } = await post(hook, '/webhook/double?n=21');
    expect(status).toBe(200);
    expect(await res.json()).toEqual({ n: 42 });
    const stored = await row(c, executionId);
    expect(stored).toMatchObject({ status: 'succeeded', mode: 'production', attempt: 1, locked_by: null });
    expect(JSON.parse(stored.steps).at(-1).output).toEqual({ n: 42 });
  });

  it('a pure workflow that fails is stored failed and queues its error workflow for the workers', async () => {
    const handler = await activeWorkflow(c, {
      name: 'on failure',
      trigger: { path: 'on-failure' },
      steps: [{ name: 'note', type: 'code', source: 'return { seen: true }' }],
    });
    await activeWorkflow(c, {
      name: 'breaks',
      trigger: { path: 'breaks' },
      settings: { errorWorkflowId: handler },
      steps: [{ name: 'compute', type: 'set', fields: { x: '{{ $error("no total") }}' } }],
    });
    const { status, executionId } = await post(hook, '/webhook/breaks');
    expect(status).toBe(200);
    const failed = await row(c, executionId);
    expect(failed.status).toBe('failed');
    expect(JSON.parse(failed.error).message).toContain('no total');
    // The error workflow's execution: queued (a code step), waiting for a worker.
    const {
      value: [errorRun],
    } = await within(5_000, async () => {
      const { rows } = await c.sql.query(
        "select status, mode, trigger from executions where workflow_id = $1 and mode = 'error'",
        [handler],
      );
      return rows.length > 0 && rows;
    });
    expect(errorRun.status).toBe('queued');
    expect(JSON.parse(errorRun.trigger).execution.id).toBe(executionId);
  });

  it('stores a workflow with a code step queued, for the workers', async () => {
    await activeWorkflow(c, {
      name: 'code',
      trigger: { path: 'code' },
      steps: [{ name: 'triple', type: 'code', source: 'return { n: 3 }' }],
    });
    const { status, executionId } = await post(hook, '/webhook/code');
    expect(status).toBe(200);
    expect((await row(c, executionId)).status).toBe('queued');
  });
});

describe('HOOKFLOW_INGEST_RUN_PURE=false', () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await startCluster({ webhooks: 1, workers: 0, env: { HOOKFLOW_INGEST_RUN_PURE: 'false' } });
  });
  afterAll(() => c?.close());

  it('stores a pure workflow queued, and a worker runs it', async () => {
    await activeWorkflow(c, {
      name: 'echo',
      trigger: { path: 'echo' },
      steps: [{ name: 'echo', type: 'set', fields: { ok: true } }],
    });
    const { status, executionId } = await post(c.webhooks[0]!, '/webhook/echo');
    expect(status).toBe(200);
    expect((await row(c, executionId)).status).toBe('queued');
    await c.start('worker');
    await within(10_000, async () => (await row(c, executionId)).status === 'succeeded', 50);
  });
});
