/**
 * Turning a client's trigger input into the stored TriggerConfig: defaults, path normalisation,
 * cross-field rules the schema cannot say, and secrets (sealed for storage, masked on the way
 * out, kept when the client sends the mask back).
 */
import { randomUUID } from 'node:crypto';
import type { FieldError } from '../errors.js';
import type { SecretBox } from '../security/secrets.js';
import { normalizePath } from '../shared/path.js';
import { compileTemplate } from '../engine/expressions.js';
import { parseCidr } from '../model/cidr.js';
import {
  type AuthConfig,
  isWebhookTrigger,
  MASK,
  type ScheduleTrigger,
  SECRET_FIELDS,
  type TriggerConfig,
  type TriggerInput,
  type TriggerOptions,
  type WebhookTrigger,
} from '../model/workflow.js';
import { cronProblem, DEFAULT_TIMEZONE, timezoneProblem } from '../shared/schedule.js';

/**
 * The stored trigger for a client's input: a webhook (the default) or a schedule. The fields of
 * the other type are ignored, so switching types in a PATCH needs only the new type's fields.
 */
export function buildTrigger(
  input: TriggerInput | undefined,
  previous: TriggerConfig | undefined,
  secrets: SecretBox,
): { trigger: TriggerConfig } | { errors: FieldError[] } {
  if (input?.type === 'schedule') return buildSchedule(input, previous);
  return buildWebhook(input, previous && isWebhookTrigger(previous) ? previous : undefined, secrets);
}

function buildSchedule(
  input: TriggerInput,
  previous: TriggerConfig | undefined,
): { trigger: ScheduleTrigger } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const kept = previous?.type === 'schedule' ? previous : undefined;
  const cron = (input.cron ?? kept?.cron ?? '').trim();
  const timezone = input.timezone ?? kept?.timezone ?? DEFAULT_TIMEZONE;
  if (!cron) {
    errors.push({
      field: '/trigger/cron',
      message: 'a schedule needs a cron expression, e.g. "*/5 * * * *" or "@hourly"',
    });
  } else {
    const problem = cronProblem(cron);
    if (problem) errors.push({ field: '/trigger/cron', message: `"${cron}" ${problem}` });
  }
  const zone = timezoneProblem(timezone);
  if (zone) errors.push({ field: '/trigger/timezone', message: zone });
  if (errors.length > 0) return { errors };
  return { trigger: { type: 'schedule', cron, timezone, missed: input.missed ?? kept?.missed ?? 'runOnce' } };
}

function buildWebhook(
  input: TriggerInput | undefined,
  previous: WebhookTrigger | undefined,
  secrets: SecretBox,
): { trigger: WebhookTrigger } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const rawPath = input?.path ?? previous?.path ?? randomUUID();
  const path = normalizePath(rawPath);
  if (!path.ok) errors.push({ field: '/trigger/path', message: path.error });

  const auth = sealSecrets(input?.auth ?? { type: 'none' }, previous?.auth, secrets, errors);
  if (auth.type === 'jwt') {
    const needsSecret = auth.algorithm === 'HS256';
    if (needsSecret && !auth.secret)
      errors.push({ field: '/trigger/auth/secret', message: 'HS256 needs a secret' });
    if (!needsSecret && !auth.publicKey) {
      errors.push({ field: '/trigger/auth/publicKey', message: `${auth.algorithm} needs a PEM publicKey` });
    }
  }
  if (auth.type === 'hmac' && auth.preset === 'custom' && !auth.header) {
    errors.push({
      field: '/trigger/auth/header',
      message: 'the custom preset needs the signature header name',
    });
  }
  const options = input?.options ?? {};
  optionErrors(options, errors);
  const response = input?.response ?? { mode: 'immediately' as const };
  const handshake = input?.handshake ?? undefined;
  const handshakeToken = handshake ? sealHandshakeToken(input, previous, secrets, errors) : undefined;
  const alerts = input?.alerts ?? undefined;
  if (alerts && !alerts.silenceMinutes && !alerts.rejectionsPerMinute && !alerts.schemaDrift) {
    errors.push({
      field: '/trigger/alerts',
      message: 'says when to alert: set silenceMinutes, rejectionsPerMinute or schemaDrift',
    });
  }
  let methods = input?.methods ?? ['POST'];
  // Meta checks the URL with a GET: a trigger set up for Meta accepts it whatever else it takes.
  if (handshake === 'meta' && !methods.includes('GET')) methods = [...methods, 'GET'];
  if (errors.length > 0 || !path.ok) return { errors };
  return {
    trigger: {
      type: 'webhook',
      methods,
      path: path.path,
      auth,
      response,
      options,
      ...(alerts ? { alerts } : {}),
      ...(handshake ? { handshake } : {}),
      ...(handshakeToken ? { handshakeToken } : {}),
    },
  };
}

/**
 * Meta's verify token and Zoom's secret token are needed to answer their handshakes; Slack and
 * Microsoft Graph need none. Sealed like the auth secrets; "***" keeps the stored one.
 */
function sealHandshakeToken(
  input: TriggerInput | undefined,
  previous: WebhookTrigger | undefined,
  secrets: SecretBox,
  errors: FieldError[],
): string | undefined {
  const handshake = input?.handshake;
  const given = input?.handshakeToken ?? undefined;
  const needed = handshake === 'meta' || handshake === 'zoom';
  if (given === undefined) {
    if (needed) {
      errors.push({
        field: '/trigger/handshakeToken',
        message:
          handshake === 'meta'
            ? "Meta's handshake needs the verify token you enter in Meta's webhook settings"
            : "Zoom's handshake needs your Zoom app's secret token",
      });
    }
    return undefined;
  }
  if (given !== MASK) return secrets.sealOnce(given);
  if (previous?.handshakeToken) return secrets.innermost(previous.handshakeToken);
  errors.push({ field: '/trigger/handshakeToken', message: 'no stored token to keep; send the real value' });
  return undefined;
}

/** Rules of trigger options that the schema cannot say. */
function optionErrors(options: TriggerOptions, errors: FieldError[]): void {
  (options.ipAllowlist ?? []).forEach((entry, i) => {
    const parsed = parseCidr(entry);
    if ('error' in parsed) errors.push({ field: `/trigger/options/ipAllowlist/${i}`, message: parsed.error });
  });
  (options.allowedOrigins ?? []).forEach((origin, i) => {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      errors.push({
        field: `/trigger/options/allowedOrigins/${i}`,
        message: 'must be "*" or an origin like https://app.example.com',
      });
    }
  });
  const idem = options.idempotency;
  if (idem) {
    if ((idem.header === undefined) === (idem.key === undefined)) {
      errors.push({ field: '/trigger/options/idempotency', message: 'needs exactly one of header or key' });
    } else if (idem.key !== undefined) {
      const compiled = compileTemplate(idem.key, '/trigger/options/idempotency/key');
      for (const e of compiled.errors) {
        errors.push({ field: e.field, message: e.message });
      }
      for (const field of compiled.secretsMisused)
        errors.push({
          field,
          message:
            "uses $secrets, which only an http step's url, headers, query and body (and the email and sql steps' fields) may use",
        });
    }
  }
}

/**
 * Every secret a client sends is sealed before it is stored, exactly once (`sealOnce`: a value this
 * key sealed already is not sealed again). A secret sent back as "***" keeps the stored (sealed)
 * value, so PUT/PATCH of a GET result does not wipe it; a kept value loses any extra layers an
 * older version added, so saving also repairs it.
 */
function sealSecrets(
  auth: AuthConfig,
  previous: AuthConfig | undefined,
  secrets: SecretBox,
  errors: FieldError[],
): AuthConfig {
  const next: Record<string, unknown> = { ...auth };
  for (const field of SECRET_FIELDS) {
    if (typeof next[field] !== 'string') continue;
    if (next[field] !== MASK) {
      next[field] = secrets.sealOnce(next[field] as string);
      continue;
    }
    const kept =
      previous && previous.type === auth.type ? (previous as Record<string, unknown>)[field] : undefined;
    if (typeof kept === 'string') next[field] = secrets.innermost(kept);
    else
      errors.push({
        field: `/trigger/auth/${field}`,
        message: 'no stored secret to keep; send the real value',
      });
  }
  return next as AuthConfig;
}

/** The trigger as the API and exports show it: every secret as "***". */
export function maskTrigger(trigger: WebhookTrigger): Omit<WebhookTrigger, 'auth' | 'handshakeToken'> & {
  auth: Record<string, unknown>;
  handshakeToken?: typeof MASK;
} {
  const { handshakeToken, ...rest } = trigger;
  return { ...rest, auth: maskAuth(trigger.auth), ...(handshakeToken ? { handshakeToken: MASK } : {}) };
}

export function maskAuth(auth: AuthConfig): Record<string, unknown> {
  const out: Record<string, unknown> = { ...auth };
  for (const field of SECRET_FIELDS) if (typeof out[field] === 'string') out[field] = MASK;
  return out;
}

/**
 * The auth config with its secrets in clear, for the verifiers. Extra layers are peeled first
 * (`innermost`): production may run a published version whose history row an older process
 * sealed twice, and start-up repair fixes only the workflows row. Revealed once per
 * workflow version (receive.ts caches it), so the extra decryption costs nothing per request.
 */
export function revealAuth(auth: AuthConfig, secrets: SecretBox): AuthConfig {
  const out: Record<string, unknown> = { ...auth };
  for (const field of SECRET_FIELDS)
    if (typeof out[field] === 'string') out[field] = secrets.reveal(secrets.innermost(out[field] as string));
  return out as AuthConfig;
}
