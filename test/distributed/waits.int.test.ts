/**
 * Waits for a call or an event (SPEC 7g) across processes on one PostgreSQL: the execution parks
 * on the worker; its resume URL is called on another process (a webhook process that never ran it)
 * and resumes it once (a second call, on a third process, is 409); the worker that parked it stops
 * and a new one resumes it after the call; an event accepted by one webhook process resumes a run
 * that registered its wait on the worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeWorkflow, type Cluster, type RoleProcess, startCluster } from '../helpers/cluster.js';
import { eventually } from '../helpers/server.js';

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ webhooks: 2, workers: 1 });
});

afterAll(async () => {
  await cluster?.close();
});

async function fire(target: RoleProcess, path: string, body: unknown = {}): Promise<string> {
  const res = await fetch(`${target.url}/webhook/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return res.headers.get('x-hookflow-execution-id')!;
}

async function execution(id: string) {
  return (await cluster.api(cluster.webhooks[0]!, 'GET', `/api/v1/executions/${id}`)).body;
}

const waiting = (id: string) =>
  eventually(async () => {
    const e = await execution(id);
    return e.status === 'waiting' && e.waitingFor ? e : undefined;
  }, 20_000);

const finished = (id: string) =>
  eventually(async () => {
    const e = await execution(id);
    return e.status === 'succeeded' || e.status === 'failed' ? e : undefined;
  }, 30_000);

/** The resume URL, called on `target` (the URL's origin is HOOKFLOW_BASE_URL's). */
const on = (target: RoleProcess, url: string) => url.replace(/^https?:\/\/[^/]+/, target.url);

describe('waits across processes', () => {
  it('a resume URL works on any process, once; and after the worker that parked it stopped', async () => {
    const [a, b] = cluster.webhooks as [RoleProcess, RoleProcess];
    await activeWorkflow(cluster, {
      name: 'approval',
      trigger: { path: 'approval' },
      steps: [
        { name: 'approval', type: 'wait', for: 'call', timeoutSeconds: 600 },
        { name: 'after', type: 'set', fields: { decision: '{{ $.body.decision }}' } },
      ],
    });
    const id = await fire(a, 'approval');
    const url = (await waiting(id)).waitingFor.resumeUrl as string;

    // The worker that parked it stops; the call is taken by a process that never ran it.
    const parkedBy = cluster.workers[0]!;
    parkedBy.child.kill('SIGTERM');
    await parkedBy.exited;
    const first = await fetch(on(b, url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'yes' }),
    });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ message: 'Execution resumed' });
    const second = await fetch(on(a, url), { method: 'POST' });
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ code: 'already_resumed' });

    await cluster.start('worker');
    const done = await finished(id);
    expect(done.status).toBe('succeeded');
    expect(done.steps[1].output).toEqual({ decision: 'yes' });
  });

  it('an event accepted by one webhook process resumes the run whose wait a worker registered', async () => {
    const [a, b] = cluster.webhooks as [RoleProcess, RoleProcess];
    const stripe = await activeWorkflow(cluster, {
      name: 'stripe',
      trigger: { path: 'stripe' },
      steps: [{ name: 'seen', type: 'set', fields: { type: '{{ body.type }}' } }],
    });
    await activeWorkflow(cluster, {
      name: 'payment',
      trigger: { path: 'payment' },
      steps: [
        {
          name: 'paid',
          type: 'wait',
          for: 'event',
          workflowId: stripe,
          match: '{{ body.data.object.id }}',
          equals: '{{ $trigger.body.id }}',
          timeoutSeconds: 600,
        },
      ],
    });
    const id = await fire(a, 'payment', { id: 'pi_cross' });
    await waiting(id);
    const event = { type: 'payment_intent.succeeded', data: { object: { id: 'pi_cross' } } };
    await fire(b, 'stripe', event);
    const done = await finished(id);
    expect(done.status).toBe('succeeded');
    expect(done.steps[0].output.body).toEqual(event);
  });
});
