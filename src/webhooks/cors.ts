/**
 * CORS for webhook URLs (SPEC 5b `allowedOrigins`): the matching origin is echoed (not only the
 * first one listed: FIELD-NOTES 11), and a preflight lists the trigger's real methods.
 */
import type { WebhookTrigger } from '../model/workflow.js';

const MAX_AGE_SECONDS = '600';

/** The Access-Control-Allow-Origin value for this request, or undefined when the origin is not allowed. */
export function allowedOrigin(trigger: WebhookTrigger, origin: string | undefined): string | undefined {
  if (origin === undefined) return undefined;
  const allowed = trigger.options.allowedOrigins ?? ['*'];
  if (allowed.includes('*')) return '*';
  return allowed.includes(origin) ? origin : undefined;
}

export function corsHeaders(trigger: WebhookTrigger, origin: string | undefined): Record<string, string> {
  const allow = allowedOrigin(trigger, origin);
  if (allow === undefined) return {};
  return allow === '*'
    ? { 'access-control-allow-origin': '*' }
    : { 'access-control-allow-origin': allow, vary: 'Origin' };
}

export function preflightHeaders(
  trigger: WebhookTrigger,
  origin: string | undefined,
  requestedHeaders: string | undefined,
): Record<string, string> {
  const headers = corsHeaders(trigger, origin);
  if (!headers['access-control-allow-origin']) return headers;
  const methods = new Set(trigger.methods);
  if (methods.has('GET')) methods.add('HEAD');
  headers['access-control-allow-methods'] = [...methods, 'OPTIONS'].join(', ');
  if (requestedHeaders) headers['access-control-allow-headers'] = requestedHeaders.slice(0, 2048);
  headers['access-control-max-age'] = MAX_AGE_SECONDS;
  return headers;
}
