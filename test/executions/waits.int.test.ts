/**
 * Waits for a call or an event (SPEC 7g) over HTTP, on SQLite and PostgreSQL: `$execution.resumeUrl`
 * known from the first step; its first call resumes the wait with the call's item (200), a second
 * is 409 `already_resumed`, a wrong token or an execution not waiting 404 `not_waiting`; of many
 * concurrent calls one wins; the timeout outputs `{"timedOut": true}`. An event wait resumes on the
 * first production request of the watched workflow whose match gives its key (every wait on that
 * key), the watched workflow's own execution runs as usual, and an event stored before the wait
 * registered (sent by the step before it) is not missed. Save-time validation.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishedExecution } from '../engine/int-helpers.js';
import {
  createActiveWorkflow,
  createWorkflow,
  eventually,
  startTestServer,
  type TestServer,
  tempDir,
} from '../helpers/server.js';

const BASE = 'http://hookflow.test';

describe.each([
  { dialect: 'sqlite', postgres: false },
  { dialect: 'postgres', postgres: true },
])('waits on $dialect', ({ postgres }) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ postgres, env: { HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' } });
  });

  afterAll(async () => {
    await server?.close();
  });

  async function fire(path: string, body: unknown = {}) {
    const res = await fetch(`${server.url}/webhook/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return res.headers.get('x-hookflow-execution-id')!;
  }

  /** The execution once it waits for a call or an event (its `waitingFor` set). */
  async function waiting(id: string, timeoutMs = 10_000) {
    return eventually(async () => {
      const e = (await server.api('GET', `/api/v1/executions/${id}`)).body;
      return e.status === 'waiting' && e.waitingFor ? e : undefined;
    }, timeoutMs);
  }

  /** A resume URL as the server hands it out (HOOKFLOW_BASE_URL), called on the test server. */
  const local = (url: string) => url.replace(BASE, server.url);

  const approval = (path: string, timeoutSeconds = 600) =>
    createActiveWorkflow(server, {
      name: path,
      trigger: { path },
      steps: [
        { name: 'link', type: 'set', fields: { url: '{{ $execution.resumeUrl }}' } },
        { name: 'approval', type: 'wait', for: 'call', timeoutSeconds },
        {
          name: 'after',
          type: 'set',
          fields: { decision: '{{ $.body.decision }}', method: '{{ $.method }}' },
        },
      ],
    });

  it('a resume URL: known from the first step, used once (200), then 409; the call is the wait’s output', async () => {
    await approval('approve-once');
    const id = await fire('approve-once');
    const e = await waiting(id);
    const url = e.steps[0].output.url as string;
    expect(url).toMatch(new RegExp(`^${BASE}/webhook-resume/${id}/[A-Za-z0-9_-]{43}$`));
    expect(e.waitingFor).toEqual({
      for: 'call',
      step: 'approval',
      resumeUrl: url,
      expiresAt: expect.any(String),
    });
    expect(Date.parse(e.waitingFor.expiresAt) - Date.now()).toBeGreaterThan(590_000);

    const first = await fetch(local(url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approved' }),
    });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ message: 'Execution resumed' });
    const again = await fetch(local(url), { method: 'POST' });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: 'already_resumed' });

    const done = await finishedExecution(server, id);
    expect(done.status).toBe('succeeded');
    expect(done.steps[1].output).toMatchObject({
      method: 'POST',
      body: { decision: 'approved' },
      executionMode: 'production',
      webhookUrl: `${BASE}/webhook-resume/${id}`,
    });
    expect(done.steps[2].output).toEqual({ decision: 'approved', method: 'POST' });
    // Once finished it waits for nothing: 409 still says it was resumed.
    expect((await fetch(local(url))).status).toBe(409);
  });

  it('a wrong token, an unknown execution, or one not waiting is 404 not_waiting', async () => {
    await approval('approve-unknown');
    const id = await fire('approve-unknown');
    const url = (await waiting(id)).waitingFor.resumeUrl as string;
    const token = url.slice(url.lastIndexOf('/') + 1);
    const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const path of [
      `/webhook-resume/${id}/${forged}`,
      `/webhook-resume/${id}/short`,
      `/webhook-resume/0190f000-0000-7000-8000-000000000000/${token}`,
      `/webhook-resume/${id}`,
    ]) {
      const res = await fetch(`${server.url}${path}`, { method: 'POST' });
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'not_waiting' });
    }
    // A workflow without a call wait: its token is right, but nothing waits for a call.
    await createActiveWorkflow(server, {
      name: 'no call',
      trigger: { path: 'no-call' },
      steps: [{ name: 'link', type: 'set', fields: { url: '{{ $execution.resumeUrl }}' } }],
    });
    const plain = await finishedExecution(server, await fire('no-call'));
    const res = await fetch(local(plain.steps[0].output.url), { method: 'POST' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'not_waiting' });
    // The waiting one is untouched.
    expect((await fetch(local(url), { method: 'POST' })).status).toBe(200);
  });

  it('of 20 concurrent calls to one resume URL exactly one resumes it', async () => {
    await approval('approve-race');
    const id = await fire('approve-race');
    const url = local((await waiting(id)).waitingFor.resumeUrl);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ decision: `call ${i}` }),
        }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const done = await finishedExecution(server, id);
    expect(done.steps[2].output.decision).toBe(`call ${statuses.indexOf(200)}`);
  });

  it('a call wait that is not called outputs {"timedOut": true} after timeoutSeconds', async () => {
    await approval('approve-timeout', 1);
    const id = await fire('approve-timeout');
    const done = await finishedExecution(server, id, 15_000);
    expect(done.status).toBe('succeeded');
    expect(done.steps[1].output).toEqual({ timedOut: true });
  });

  describe('for an event', () => {
    let stripe: { id: string };

    beforeAll(async () => {
      stripe = await createActiveWorkflow(server, {
        name: 'stripe events',
        trigger: { path: `stripe-${postgres ? 'pg' : 'lite'}` },
        steps: [{ name: 'seen', type: 'set', fields: { type: '{{ body.type }}' } }],
      });
    });

    const payment = (path: string, extra: unknown[] = []) =>
      createActiveWorkflow(server, {
        name: path,
        trigger: { path },
        steps: [
          ...extra,
          {
            name: 'paid',
            type: 'wait',
            for: 'event',
            workflowId: stripe.id,
            match: '{{ body.data.object.id }}',
            equals: '{{ $trigger.body.id }}',
            timeoutSeconds: 600,
          },
          { name: 'after', type: 'set', fields: { event: '{{ $.body.type }}' } },
        ],
      });

    const event = (id: string, type = 'payment_intent.succeeded') => ({ type, data: { object: { id } } });

    it('resumes every run waiting on the key with the matching request; the other workflow runs as usual', async () => {
      await payment('pay-many');
      const a = await fire('pay-many', { id: 'pi_many' });
      const b = await fire('pay-many', { id: 'pi_many' });
      const other = await fire('pay-many', { id: 'pi_other' });
      for (const id of [a, b, other]) await waiting(id);
      expect((await waiting(a)).waitingFor).toEqual({
        for: 'event',
        step: 'paid',
        workflowId: stripe.id,
        key: 'pi_many',
        expiresAt: expect.any(String),
      });
      // Not this one: another object's event.
      await fire(`stripe-${postgres ? 'pg' : 'lite'}`, event('pi_unrelated'));
      const sent = await fire(`stripe-${postgres ? 'pg' : 'lite'}`, event('pi_many'));
      for (const id of [a, b]) {
        const done = await finishedExecution(server, id);
        expect(done.status).toBe('succeeded');
        expect(done.steps[0].output.body).toEqual(event('pi_many'));
        expect(done.steps[1].output).toEqual({ event: 'payment_intent.succeeded' });
      }
      const own = await finishedExecution(server, sent);
      expect(own).toMatchObject({ status: 'succeeded', workflowId: stripe.id });
      // Still waiting (or looking again at this moment: its parked step looks after 1, 2, 4… s).
      expect(['waiting', 'running']).toContain(
        (await server.api('GET', `/api/v1/executions/${other}`)).body.status,
      );
    });

    it('an event stored before the wait registers (sent by the step before it) is not missed', async () => {
      await payment('pay-early', [
        {
          name: 'charge',
          type: 'http',
          method: 'POST',
          url: `${server.url}/webhook/stripe-${postgres ? 'pg' : 'lite'}`,
          body: '{{ {"type": "payment_intent.succeeded", "data": {"object": {"id": $trigger.body.id}}} }}',
        },
      ]);
      const id = await fire('pay-early', { id: 'pi_early' });
      const done = await finishedExecution(server, id);
      expect(done.status).toBe('succeeded');
      expect(done.steps[1].output.body).toEqual(event('pi_early'));
    });

    it('an event that came before the run started does not count', async () => {
      await fire(`stripe-${postgres ? 'pg' : 'lite'}`, event('pi_before'));
      await payment('pay-before');
      const id = await fire('pay-before', { id: 'pi_before' });
      await waiting(id);
      // Looked back at registration and once more after a second: still waiting.
      await new Promise((r) => setTimeout(r, 1_500));
      expect((await server.api('GET', `/api/v1/executions/${id}`)).body.status).toBe('waiting');
      await fire(`stripe-${postgres ? 'pg' : 'lite'}`, event('pi_before'));
      expect((await finishedExecution(server, id)).status).toBe('succeeded');
    });

    it('is refused on save without a webhook workflow, a match or an equals', async () => {
      const schedule = await createWorkflow(server, {
        name: 'nightly',
        trigger: { type: 'schedule', cron: '0 3 * * *' },
      });
      const cases: [Record<string, unknown>, string][] = [
        [{ workflowId: 'nope', match: '{{ body.id }}', equals: 'x' }, '/steps/0/workflowId'],
        [{ workflowId: schedule.id, match: '{{ body.id }}', equals: 'x' }, '/steps/0/workflowId'],
        [{ workflowId: stripe.id, equals: 'x' }, '/steps/0/match'],
        [{ workflowId: stripe.id, match: 'body.id', equals: 'x' }, '/steps/0/match'],
        [{ workflowId: stripe.id, match: '{{ body.id }}' }, '/steps/0/equals'],
        [{ match: '{{ body.id }}', equals: 'x' }, '/steps/0/workflowId'],
      ];
      for (const [fields, field] of cases) {
        const res = await server.api('POST', '/api/v1/workflows', {
          name: 'bad wait',
          steps: [{ name: 'w', type: 'wait', for: 'event', ...fields }],
        });
        expect(res.status, JSON.stringify(fields)).toBe(400);
        expect(res.body.code).toBe('validation_failed');
        expect(res.body.fields.map((f: { field: string }) => f.field)).toContain(field);
      }
      const mixed = await server.api('POST', '/api/v1/workflows', {
        name: 'bad call',
        steps: [{ name: 'w', type: 'wait', for: 'call', seconds: 5 }],
      });
      expect(mixed.status).toBe(400);
      expect(mixed.body.fields.map((f: { field: string }) => f.field)).toContain('/steps/0/seconds');
    });
  });
});

describe('a resume URL after a restart (SQLite)', () => {
  it('resumes the execution a stopped server parked', async () => {
    const dataDir = tempDir();
    const first = await startTestServer({ dataDir });
    let url: string;
    let id: string;
    try {
      await createActiveWorkflow(first, {
        name: 'restart',
        trigger: { path: 'restart' },
        steps: [
          { name: 'approval', type: 'wait', for: 'call', timeoutSeconds: 600 },
          { name: 'after', type: 'set', fields: { decision: '{{ $.query.decision }}' } },
        ],
      });
      const res = await fetch(`${first.url}/webhook/restart`, { method: 'POST' });
      id = res.headers.get('x-hookflow-execution-id')!;
      url = await eventually(async () => {
        const e = (await first.api('GET', `/api/v1/executions/${id}`)).body;
        return e.status === 'waiting' && e.waitingFor?.resumeUrl;
      });
    } finally {
      await first.close();
    }
    const second = await startTestServer({ dataDir });
    try {
      const res = await fetch(`${url.replace(BASE, second.url)}?decision=later`);
      expect(res.status).toBe(200);
      const done = await finishedExecution(second, id);
      expect(done.status).toBe('succeeded');
      expect(done.steps[1].output).toEqual({ decision: 'later' });
    } finally {
      await second.close();
    }
  });
});

describe('the webhook hot path with and without event waits (PostgreSQL statistics)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ postgres: true });
  });

  afterAll(async () => {
    await server?.close();
  });

  /** PostgreSQL's own counters: rows inserted into executions, and scans of execution_waits. */
  async function counters(): Promise<{ inserted: number; waitScans: number }> {
    const { rows } = await sql<{ relname: string; ins: string; scans: string }>`
      select relname, n_tup_ins::text as ins, (coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::text as scans
      from pg_stat_user_tables where relname in ('executions', 'execution_waits')`.execute(
      server.hookflow.store.db,
    );
    const of = (name: string) => rows.find((r) => r.relname === name)!;
    return { inserted: Number(of('executions').ins), waitScans: Number(of('execution_waits').scans) };
  }

  async function send(n: number) {
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const res = await fetch(`${server.url}/webhook/quiet`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: `evt_${i}` }),
        });
        expect(res.status).toBe(200);
      }),
    );
  }

  it('reads execution_waits for a request only while some run waits on its workflow', async () => {
    const quiet = await createActiveWorkflow(server, {
      name: 'quiet',
      trigger: { path: 'quiet' },
      steps: [{ name: 'seen', type: 'set', fields: { id: '{{ body.id }}' } }],
    });
    const before = await counters();
    await send(100);
    // Statistics reach the view when each connection reports them (within ~10 s of going idle);
    // a request's reads of execution_waits would be reported with its insert.
    const after = await eventually(async () => {
      const c = await counters();
      return c.inserted >= before.inserted + 100 && c.inserted > 0 ? c : undefined;
    }, 30_000);
    // Read per request, it would be 100 or more. A few reads of the process's own may land in the
    // window: the watched workflows' re-read (at start, once a minute, after a bus reconnect, which
    // a ping unanswered for 5 s on a loaded machine causes), whose statistics reach the view late.
    expect(after.waitScans - before.waitScans).toBeLessThanOrEqual(5);

    // A run now waits on this workflow's requests: each request is matched in its transaction.
    await createActiveWorkflow(server, {
      name: 'waiting on quiet',
      trigger: { path: 'waiting-on-quiet' },
      steps: [
        {
          name: 'never',
          type: 'wait',
          for: 'event',
          workflowId: quiet.id,
          match: '{{ body.id }}',
          equals: 'no such id',
          timeoutSeconds: 600,
        },
      ],
    });
    const res = await fetch(`${server.url}/webhook/waiting-on-quiet`, { method: 'POST' });
    const id = res.headers.get('x-hookflow-execution-id')!;
    await eventually(
      async () => (await server.api('GET', `/api/v1/executions/${id}`)).body.waitingFor,
      10_000,
    );
    const watched = await counters();
    await send(100);
    await eventually(async () => (await counters()).waitScans >= watched.waitScans + 100, 30_000);
  });
});
