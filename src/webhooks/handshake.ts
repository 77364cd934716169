/**
 * Provider handshakes (SPEC 7g): the URL checks some providers make before they send any event,
 * answered here without starting an execution. Each follows the provider's documented exchange:
 * - Slack (api.slack.com/events/url_verification): a signed POST `{"type":"url_verification",
 *   "challenge"}` → 200, the challenge as text/plain.
 * - Meta (developers.facebook.com/docs/graph-api/webhooks/getting-started): an unsigned GET
 *   `?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…` → 200, the challenge, when the verify
 *   token is the trigger's `handshakeToken`; 403 otherwise.
 * - Microsoft Graph (learn.microsoft.com/graph/change-notifications-delivery-webhooks): a POST
 *   `?validationToken=…` with no signature → 200 text/plain, the token decoded, within 10 s.
 * - Zoom (developers.zoom.us/docs/api/webhooks/#validate-your-webhook-endpoint): a signed POST
 *   `{"event":"endpoint.url_validation","payload":{"plainToken"}}` → 200 `{"plainToken",
 *   "encryptedToken"}`, the hex HMAC-SHA256 of plainToken keyed with the app's secret token.
 *
 * Slack and Zoom sign their checks like their events, so those are answered after the trigger's
 * auth and the body's parse (`signedHandshake`); Meta's and Graph's carry no signature and are
 * answered before the auth (`unsignedHandshake`), or no provider could ever complete them on a
 * trigger whose events are signed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors.js';
import type { WebhookTrigger } from '../model/workflow.js';
import type { Outcome } from './respond.js';

/** What the providers' checks need of the request. */
export interface HandshakeRequest {
  method: string;
  rawQuery: string;
}

/** Meta's and Microsoft Graph's checks: from the query alone. undefined: not a handshake. */
export function unsignedHandshake(
  trigger: WebhookTrigger,
  req: HandshakeRequest,
  token: () => string | undefined,
): Outcome | undefined {
  const kind = trigger.handshake;
  if (kind !== 'meta' && kind !== 'microsoft-graph') return undefined;
  if (req.rawQuery === '') return undefined;
  const query = new URLSearchParams(req.rawQuery);
  if (kind === 'microsoft-graph') {
    const validationToken = query.get('validationToken');
    if (req.method !== 'POST' || validationToken === null) return undefined;
    return text('microsoft-graph', validationToken);
  }
  if (req.method !== 'GET' || query.get('hub.mode') !== 'subscribe') return undefined;
  const challenge = query.get('hub.challenge') ?? '';
  if (!sameToken(query.get('hub.verify_token') ?? '', token() ?? '')) {
    throw new AppError(
      'handshake_failed',
      "The verify token does not match this trigger's handshake token.",
      {
        hint: "Enter the same verify token in Meta's webhook settings and in the trigger's handshake token.",
      },
    );
  }
  return text('meta', challenge);
}

/** Slack's and Zoom's checks: from the parsed JSON body. undefined: not a handshake. */
export function signedHandshake(
  trigger: WebhookTrigger,
  body: unknown,
  token: () => string | undefined,
): Outcome | undefined {
  const kind = trigger.handshake;
  if ((kind !== 'slack' && kind !== 'zoom') || !isObject(body)) return undefined;
  if (kind === 'slack') {
    if (body.type !== 'url_verification' || typeof body.challenge !== 'string') return undefined;
    return text('slack', body.challenge);
  }
  const payload = body.payload;
  if (body.event !== 'endpoint.url_validation' || !isObject(payload)) return undefined;
  const plainToken = payload.plainToken;
  if (typeof plainToken !== 'string') return undefined;
  const encryptedToken = createHmac('sha256', token() ?? '')
    .update(plainToken)
    .digest('hex');
  return { status: 200, headers: {}, body: { plainToken, encryptedToken }, handshake: 'zoom' };
}

function text(handshake: string, value: string): Outcome {
  return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: value, handshake };
}

function sameToken(given: string, expected: string): boolean {
  if (expected === '') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
