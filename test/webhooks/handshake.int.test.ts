/**
 * Provider handshakes (SPEC 7g) over real HTTP: each preset against a request built as the
 * provider documents it, answered without an execution, and the trigger's token kept as a secret.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createActiveWorkflow,
  createWorkflow,
  json,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

async function executions(workflowId: string) {
  return server.hookflow.store.db
    .selectFrom('executions')
    .select('id')
    .where('workflow_id', '=', workflowId)
    .execute();
}

async function handshakesCounted(provider: string): Promise<number> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.token}` } });
  const line = (await res.text())
    .split('\n')
    .find((l) => l.startsWith('hookflow_webhook_handshakes_total') && l.includes(`provider="${provider}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('slack', () => {
  // api.slack.com/authentication/verifying-requests-from-slack: v0=hex HMAC-SHA256(signing
  // secret, "v0:" + timestamp + ":" + body), with X-Slack-Request-Timestamp.
  const secret = 'slack-signing-secret-0123';
  const signed = (body: string, ts = Math.floor(Date.now() / 1000)) => ({
    'content-type': 'application/json',
    'x-slack-request-timestamp': String(ts),
    'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`,
  });

  it('answers a signed url_verification with its challenge, as text, and starts nothing', async () => {
    const wf = await createActiveWorkflow(server, {
      trigger: { path: 'hs-slack', handshake: 'slack', auth: { type: 'hmac', preset: 'slack', secret } },
      steps: [{ type: 'set', name: 'seen', fields: { x: '{{ 1 }}' } }],
    });
    const before = await handshakesCounted('slack');
    const body = JSON.stringify({
      token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      type: 'url_verification',
    });
    const res = await fetch(`${server.url}/webhook/hs-slack`, {
      method: 'POST',
      headers: signed(body),
      body,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(await res.text()).toBe('3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P');
    expect(await executions(wf.id)).toHaveLength(0);
    expect(await handshakesCounted('slack')).toBe(before + 1);

    // Unsigned, the check is refused like any call (Slack signs its check).
    const forged = await fetch(`${server.url}/webhook/hs-slack`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(forged.status).toBe(401);

    // An event is an event: it starts the workflow.
    const event = JSON.stringify({ type: 'event_callback', event: { type: 'app_mention' } });
    const started = await fetch(`${server.url}/webhook/hs-slack`, {
      method: 'POST',
      headers: signed(event),
      body: event,
    });
    expect(started.status).toBe(200);
    expect(await executions(wf.id)).toHaveLength(1);
  });

  it('answers on the test URL too, while listening', async () => {
    const wf = await createWorkflow(server, { trigger: { path: 'hs-slack-test', handshake: 'slack' } });
    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, {})).status).toBeLessThan(
      300,
    );
    const res = await fetch(`${server.url}/webhook-test/hs-slack-test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'url_verification', challenge: 'c-1' }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('c-1');
    const events = await server.api('GET', `/api/v1/workflows/${wf.id}/test-events`);
    expect(events.body.items ?? events.body).toHaveLength(0);
  });
});

describe('meta', () => {
  // developers.facebook.com/docs/graph-api/webhooks/getting-started: GET with hub.mode=subscribe,
  // hub.challenge and hub.verify_token; answer 200 with the challenge when the token matches.
  const verify = (path: string, token: string) =>
    fetch(
      `${server.url}/webhook/${path}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=${encodeURIComponent(token)}`,
    );

  it('answers the GET check with hub.challenge when the verify token matches, before the signature auth of events', async () => {
    const wf = await createActiveWorkflow(server, {
      trigger: {
        path: 'hs-meta',
        handshake: 'meta',
        handshakeToken: 'meatyhamhock',
        // Meta signs events (X-Hub-Signature-256), never the GET check.
        auth: { type: 'hmac', preset: 'github', secret: 'meta-app-secret' },
      },
    });
    // GET was added to the trigger's methods, so Meta's check reaches it.
    expect(wf.trigger.methods).toEqual(['POST', 'GET']);
    const before = await handshakesCounted('meta');
    const res = await verify('hs-meta', 'meatyhamhock');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('1158201444');
    expect(await handshakesCounted('meta')).toBe(before + 1);

    const wrong = await verify('hs-meta', 'not-the-token');
    expect(wrong.status).toBe(403);
    const body = await json(wrong);
    expect(body.code).toBe('handshake_failed');
    expect(JSON.stringify(body)).not.toContain('meatyhamhock');
    expect(await executions(wf.id)).toHaveLength(0);

    // A GET that is not a check goes through the trigger's auth as usual.
    expect((await fetch(`${server.url}/webhook/hs-meta?x=1`)).status).toBe(401);
  });

  it('keeps the token as a secret: required, sealed at rest, shown as ***, kept when sent back', async () => {
    const missing = await server.api('POST', '/api/v1/workflows', {
      name: 'meta without a token',
      trigger: { path: 'hs-meta-missing', handshake: 'meta' },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.fields.map((f: { field: string }) => f.field)).toContain('/trigger/handshakeToken');

    const wf = await createWorkflow(server, {
      trigger: { path: 'hs-meta-secret', handshake: 'meta', handshakeToken: 'verify-me-please' },
    });
    expect(wf.trigger.handshakeToken).toBe('***');
    const stored = await server.hookflow.store.db
      .selectFrom('workflows')
      .select('trigger')
      .where('id', '=', wf.id)
      .executeTakeFirstOrThrow();
    expect(stored.trigger).not.toContain('verify-me-please');

    // The GET result PUT back keeps the token; the workflow still answers Meta's check.
    const got = await server.api('GET', `/api/v1/workflows/${wf.id}`);
    expect(JSON.stringify(got.body)).not.toContain('verify-me-please');
    const { name, trigger, steps, settings } = got.body;
    expect(
      (await server.api('PUT', `/api/v1/workflows/${wf.id}`, { name, trigger, steps, settings })).status,
    ).toBe(200);
    expect((await server.api('POST', `/api/v1/workflows/${wf.id}/activate`)).status).toBe(200);
    const res = await verify('hs-meta-secret', 'verify-me-please');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('1158201444');
  });
});

describe('microsoft-graph', () => {
  it('echoes validationToken as text/plain, before the auth events carry', async () => {
    const wf = await createActiveWorkflow(server, {
      trigger: {
        path: 'hs-graph',
        handshake: 'microsoft-graph',
        auth: { type: 'header', name: 'x-client-state', value: 'graph-client-state' },
      },
    });
    // learn.microsoft.com/graph/change-notifications-delivery-webhooks: POST
    // {notificationUrl}?validationToken=<url-encoded token>, answer 200 text/plain, the token decoded.
    const token = 'Validation: Testing client application reachability for subscription Request-Id: 1a2b';
    const res = await fetch(`${server.url}/webhook/hs-graph?validationToken=${encodeURIComponent(token)}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(await res.text()).toBe(token);
    expect(await executions(wf.id)).toHaveLength(0);

    // A notification without its client state is refused by the auth as before.
    const note = await fetch(`${server.url}/webhook/hs-graph`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value: [] }),
    });
    expect(note.status).toBe(401);
  });
});

describe('zoom', () => {
  it('answers endpoint.url_validation with plainToken and its HMAC under the secret token', async () => {
    const secretToken = 'zoom-app-secret-token-42';
    const wf = await createActiveWorkflow(server, {
      trigger: { path: 'hs-zoom', handshake: 'zoom', handshakeToken: secretToken },
    });
    // developers.zoom.us/docs/api/webhooks/#validate-your-webhook-endpoint
    const plainToken = 'qgg8vlvZRS6UYooatFL8Aw';
    const res = await fetch(`${server.url}/webhook/hs-zoom`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        payload: { plainToken },
        event_ts: 1654503849680,
        event: 'endpoint.url_validation',
      }),
    });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      plainToken,
      encryptedToken: createHmac('sha256', secretToken).update(plainToken).digest('hex'),
    });
    expect(await executions(wf.id)).toHaveLength(0);

    const event = await fetch(`${server.url}/webhook/hs-zoom`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'meeting.started', payload: { object: { id: 1 } } }),
    });
    expect(event.status).toBe(200);
    expect(await executions(wf.id)).toHaveLength(1);
  });
});
