/**
 * The editor's form state for a workflow and its conversion to the API's payload. Forms edit text
 * (an expression, a number being typed, a list of names and values); the payload is JSON. Keys the
 * form does not know are kept as they were, so saving never drops configuration.
 */
import type { FieldProblem } from '../api';
import type { AuthConfig, Handshake, Method, ResponseMode, Step, Workflow } from '../types';
import { normalizePath } from '../../../src/shared/path';
import type { MissedPolicy } from '../../../src/shared/schedule';
import { FIELD_PATH_PATTERN, MAX_SEARCH_FIELDS } from '../../../src/shared/search-fields';
import { formFor, STEP_FORMS } from './steps';
import { type CaseDraft, newCase } from './steps/flow';
import type { Drafts, FormType, RawDraft, Row, StepDraft } from './steps/types';
import { bodyToText, newKey, row, textToBody, valueToText } from './steps/values';
import { nestedLists } from './lanes';
import { browserTimeZone, scheduleCronProblem, timezoneProblem } from './schedule';

export type { CaseDraft, Drafts, RawDraft, Row, StepDraft };
export { bodyToText, newCase, newKey, row, textToBody, valueToText };

export const MASK = '***';

export interface TriggerDraft {
  /** Webhook (the default) or schedule (SPEC 7f); the form keeps both types' fields, the payload only this type's. */
  type: 'webhook' | 'schedule';
  /** Schedule: as typed. */
  cron: string;
  timezone: string;
  missed: MissedPolicy;
  methods: Method[];
  path: string;
  auth: AuthConfig;
  responseMode: ResponseMode;
  responseStatus: string;
  responseNoContent: boolean;
  responseBody: string;
  responseTimeoutMs: string;
  /** Answers carry `Content-Security-Policy: sandbox` (unchecked: `response.sandbox: false`). */
  responseSandbox: boolean;
  maxBodyBytes: string;
  allowedOrigins: string;
  ipAllowlist: string;
  rateRequests: string;
  ratePerSeconds: string;
  idempotencyHeader: string;
  idempotencyKey: string;
  idempotencyWindow: string;
  schemaCheck: 'off' | 'warn' | 'reject';
  /** '' for none. */
  handshake: Handshake | '';
  /** Meta's verify token or Zoom's secret token; MASK while the saved one is kept. */
  handshakeToken: string;
  /** trigger.alerts (SPEC 7g): the alert workflow ('' for none) and when it runs. */
  alertWorkflowId: string;
  alertSilenceMinutes: string;
  alertRejectionsPerMinute: string;
  alertSchemaDrift: boolean;
}

export { MAX_SEARCH_FIELDS };
const FIELD_PATH = new RegExp(FIELD_PATH_PATTERN);

export interface Draft {
  name: string;
  trigger: TriggerDraft;
  steps: StepDraft[];
  /** settings.errorWorkflowId (SPEC 7c); '' for none. */
  errorWorkflowId: string;
  /** settings.searchFields: dotted paths of the trigger item; '' while being typed. */
  searchFields: string[];
  /** settings.concurrency (SPEC 7d): the key expression ('' for none), the limit and newest wins as typed. */
  concurrency: ConcurrencyDraft;
}

export interface ConcurrencyDraft {
  key: string;
  /** '' for the default (1). */
  limit: string;
  /** '' for none. */
  newestWins: string;
}

export const STEP_TYPES: { type: string; label: string; description: string }[] = STEP_FORMS.map((f) => ({
  type: f.type,
  label: f.label,
  description: f.description,
}));

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A stored nested step list as drafts (anything that is not a step object is left out). */
function listFrom(value: unknown): StepDraft[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter(isRecord)
    .map((s) =>
      stepDraftFrom({ ...s, name: typeof s.name === 'string' ? s.name : '', type: String(s.type ?? '') }),
    );
}

/** A stored step as its type's draft; a type with no form keeps its configuration as JSON text. */
export function stepDraftFrom(step: Step): StepDraft {
  const form = formFor(step.type);
  const extra: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(step)) {
    if (k === 'name' || k === 'type') continue;
    rest[k] = v;
    if (form && !form.keys.includes(k)) extra[k] = v;
  }
  const base = { key: newKey(), name: step.name, extra };
  if (!form) return { ...base, type: step.type, raw: JSON.stringify(rest, null, 2) };
  return { ...base, type: form.type, ...form.read(step, listFrom) } as StepDraft;
}

/** Every step name in a list, nested lists included (names are unique in the whole workflow). */
export function allNames(steps: StepDraft[], into = new Set<string>()): Set<string> {
  for (const s of steps) {
    into.add(s.name);
    for (const list of nestedLists(s)) allNames(list, into);
  }
  return into;
}

/** A new step named after its type, numbered when the name is taken anywhere in the workflow. */
export function newStep<T extends FormType>(type: T, existing: StepDraft[] | Set<string>): Drafts[T];
export function newStep(type: string, existing: StepDraft[] | Set<string>): StepDraft;
export function newStep(type: string, existing: StepDraft[] | Set<string>): StepDraft {
  const names = existing instanceof Set ? existing : allNames(existing);
  let name = type;
  for (let i = 2; names.has(name); i++) name = `${type}${i}`;
  return { ...stepDraftFrom({ name, type }), ...formFor(type)?.start?.() } as StepDraft;
}

/**
 * The step as the API takes it; problems the form can see before the server does. `at` is the
 * step's place: an index in the top-level list, or a JSON pointer (`/steps/0/then/1`). Nested
 * lists are written with `names` shared, so a name used twice anywhere is reported.
 */
export function stepFrom(
  d: StepDraft,
  at: number | string,
  problems: FieldProblem[],
  names: Set<string> = new Set(),
): Step {
  const where = typeof at === 'number' ? `/steps/${at}` : at;
  const step: Step = { name: d.name.trim(), type: d.type, ...d.extra };
  if (step.name === '') problems.push({ field: `${where}/name`, message: 'needs a name' });
  const form = formFor(d.type);
  if (form) {
    form.write(d, step, where, problems, (list, listAt) => stepsFrom(list, listAt, problems, names));
    return step;
  }
  const { raw } = d as RawDraft;
  try {
    const parsed = raw.trim() === '' ? {} : JSON.parse(raw);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new Error('not an object');
    Object.assign(step, parsed, { name: step.name, type: d.type });
  } catch {
    problems.push({ field: `${where}/raw`, message: 'is not a JSON object' });
  }
  return step;
}

/** A step list (top level or nested at `at`), each name checked against every name before it. */
export function stepsFrom(
  list: StepDraft[],
  at: string,
  problems: FieldProblem[],
  names: Set<string> = new Set(),
): Step[] {
  return list.map((s, i) => {
    const name = s.name.trim();
    // The name is claimed before the nested lists are written, as the server reads them (depth first).
    if (name !== '' && names.has(name))
      problems.push({ field: `${at}/${i}/name`, message: `"${name}" is used by another step` });
    names.add(name);
    return stepFrom(s, `${at}/${i}`, problems, names);
  });
}

export function draftFrom(w: Workflow): Draft {
  const t = w.trigger;
  const o = t.options ?? {};
  const r = t.response ?? { mode: 'immediately' };
  return {
    name: w.name,
    trigger: {
      type: t.type === 'schedule' ? 'schedule' : 'webhook',
      cron: t.cron ?? '',
      timezone: t.timezone ?? browserTimeZone(),
      missed: t.missed ?? 'runOnce',
      // A schedule trigger (SPEC 7f) has none of these: the form starts from a webhook's defaults,
      // with a new random path, as the server gives a webhook created without one.
      methods: [...(t.methods ?? ['POST'])],
      path: t.path ?? (t.type === 'schedule' ? randomPath() : ''),
      auth: { ...(t.auth ?? { type: 'none' }) },
      responseMode: r.mode,
      responseStatus: r.status === undefined ? '' : String(r.status),
      responseNoContent: r.noContent === true,
      responseBody: bodyToText(r.body),
      responseTimeoutMs: r.timeoutMs === undefined ? '' : String(r.timeoutMs),
      responseSandbox: r.sandbox !== false,
      maxBodyBytes: o.maxBodyBytes === undefined ? '' : String(o.maxBodyBytes),
      allowedOrigins: (o.allowedOrigins ?? []).join('\n'),
      ipAllowlist: (o.ipAllowlist ?? []).join('\n'),
      rateRequests: o.rateLimit ? String(o.rateLimit.requests) : '',
      ratePerSeconds: o.rateLimit ? String(o.rateLimit.perSeconds) : '',
      idempotencyHeader: o.idempotency?.header ?? '',
      idempotencyKey: o.idempotency?.key ?? '',
      idempotencyWindow:
        o.idempotency?.windowSeconds === undefined ? '' : String(o.idempotency.windowSeconds),
      schemaCheck: o.schemaCheck ?? 'off',
      handshake: t.handshake ?? '',
      handshakeToken: t.handshakeToken ?? '',
      alertWorkflowId: t.alerts?.workflowId ?? '',
      alertSilenceMinutes: t.alerts?.silenceMinutes === undefined ? '' : String(t.alerts.silenceMinutes),
      alertRejectionsPerMinute:
        t.alerts?.rejectionsPerMinute === undefined ? '' : String(t.alerts.rejectionsPerMinute),
      alertSchemaDrift: t.alerts?.schemaDrift === true,
    },
    steps: w.steps.map(stepDraftFrom),
    errorWorkflowId: w.settings?.errorWorkflowId ?? '',
    searchFields: w.settings?.searchFields ?? [],
    concurrency: {
      key: w.settings?.concurrency?.key ?? '',
      limit: w.settings?.concurrency?.limit === undefined ? '' : String(w.settings.concurrency.limit),
      newestWins: w.settings?.concurrency?.newestWins ?? '',
    },
  };
}

/**
 * The JWT algorithm of an auth config. The server requires one and has no default
 * (src/workflows/model.ts); the form shows a missing one as HS256 (authDefaults, the algorithm
 * select), so that is what is checked and sent.
 */
function jwtAlgorithm(auth: AuthConfig): string {
  return auth.algorithm || 'HS256';
}

/** Only the keys of the auth kind (the server refuses the others). */
export function cleanAuth(auth: AuthConfig): AuthConfig {
  const pick = (...keys: (keyof AuthConfig)[]) => {
    const out: Record<string, unknown> = { type: auth.type };
    for (const k of keys) if (auth[k] !== undefined && auth[k] !== '') out[k] = auth[k];
    return out as unknown as AuthConfig;
  };
  switch (auth.type) {
    case 'basic':
      return pick('username', 'password');
    case 'header':
      return pick('name', 'value');
    case 'jwt': {
      const { type: _type, ...keys } = pick(
        jwtAlgorithm(auth) === 'HS256' ? 'secret' : 'publicKey',
        'issuer',
        'audience',
      );
      return { type: 'jwt', algorithm: jwtAlgorithm(auth), ...keys };
    }
    case 'hmac':
      return auth.preset === 'custom'
        ? pick('preset', 'secret', 'header', 'algorithm', 'encoding', 'prefix', 'toleranceSeconds')
        : pick('preset', 'secret', 'toleranceSeconds');
    default:
      return { type: 'none' };
  }
}

export function authDefaults(type: AuthConfig['type']): AuthConfig {
  switch (type) {
    case 'basic':
      return { type, username: '', password: '' };
    case 'header':
      return { type, name: 'Authorization', value: '' };
    case 'jwt':
      return { type, algorithm: 'HS256', secret: '' };
    case 'hmac':
      return { type, preset: 'github', secret: '' };
    default:
      return { type: 'none' };
  }
}

function list(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function positiveInt(text: string, field: string, problems: FieldProblem[]): number | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  if (!/^\d+$/.test(t) || Number(t) < 1) {
    problems.push({ field, message: 'must be a whole number above 0' });
    return undefined;
  }
  return Number(t);
}

/**
 * The live check of a path, with the server's own rules (src/webhooks/path.ts), on the path as
 * triggerFrom sends it: without surrounding whitespace (the server trims only slashes).
 */
export function pathProblem(path: string): string | undefined {
  const result = normalizePath(path.trim());
  return result.ok ? undefined : result.error;
}

export function normalizedPath(path: string): string | undefined {
  const result = normalizePath(path.trim());
  return result.ok ? result.path : undefined;
}

/** What the chosen auth kind needs before the server would take it. */
function authProblems(auth: AuthConfig, problems: FieldProblem[]): void {
  const need = (key: keyof AuthConfig, what: string) => {
    const v = auth[key];
    if (v === undefined || (typeof v === 'string' && v.trim() === ''))
      problems.push({ field: `/trigger/auth/${key}`, message: `needs ${what}` });
  };
  if (auth.type === 'basic') {
    need('username', 'a username');
    need('password', 'a password');
  } else if (auth.type === 'header') {
    need('name', 'a header name');
    need('value', 'the value callers must send');
    if (auth.name && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(auth.name)) {
      problems.push({ field: '/trigger/auth/name', message: 'is not a valid header name' });
    }
  } else if (auth.type === 'jwt') {
    if (jwtAlgorithm(auth) === 'HS256') need('secret', 'the shared secret');
    else need('publicKey', 'the PEM public key');
  } else if (auth.type === 'hmac') {
    need('secret', 'the signing secret');
    if (auth.preset === 'custom') need('header', 'the signature header name');
  }
}

/** A path like the one the server picks for a webhook created without one (a random UUID v4). */
export function randomPath(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A schedule trigger as the API takes it, with the server's own checks of cron and zone. */
function scheduleFrom(t: TriggerDraft, problems: FieldProblem[]) {
  const cronError = scheduleCronProblem(t.cron);
  if (cronError) problems.push({ field: '/trigger/cron', message: cronError });
  const zoneError = timezoneProblem(t.timezone);
  if (zoneError) problems.push({ field: '/trigger/timezone', message: zoneError });
  return { type: 'schedule' as const, cron: t.cron.trim(), timezone: t.timezone, missed: t.missed };
}

/** A trigger as the API takes it, of either type: a schedule's keys or a webhook's, never both. */
export type TriggerPayload = Partial<ReturnType<typeof scheduleFrom>> &
  Partial<ReturnType<typeof webhookFrom>>;

/** The trigger as the API takes it: only the chosen type's fields (the server drops the other's). */
export function triggerFrom(t: TriggerDraft, problems: FieldProblem[]): TriggerPayload {
  return t.type === 'schedule' ? scheduleFrom(t, problems) : webhookFrom(t, problems);
}

/** A webhook trigger (no `type`: the API's default) with the problems the form can see. */
export function webhookFrom(t: TriggerDraft, problems: FieldProblem[]) {
  authProblems(t.auth, problems);
  if (t.methods.length === 0)
    problems.push({ field: '/trigger/methods', message: 'needs at least one method' });
  const pathError = pathProblem(t.path);
  if (pathError) problems.push({ field: '/trigger/path', message: pathError });

  const response: Record<string, unknown> = { mode: t.responseMode };
  if (t.responseMode === 'immediately') {
    if (t.responseNoContent) response.noContent = true;
    else {
      const status = positiveInt(t.responseStatus, '/trigger/response/status', problems);
      if (status !== undefined) {
        if (status < 200 || status > 299)
          problems.push({ field: '/trigger/response/status', message: 'must be between 200 and 299' });
        response.status = status;
      }
      const body = textToBody(t.responseBody);
      if (body !== undefined) response.body = body;
    }
  }
  if (t.responseMode === 'lastStep') {
    const timeout = positiveInt(t.responseTimeoutMs, '/trigger/response/timeoutMs', problems);
    if (timeout !== undefined) response.timeoutMs = timeout;
  }
  // Kept whatever the mode, so switching modes back and forth does not drop an opt-out.
  if (!t.responseSandbox) response.sandbox = false;

  const options: Record<string, unknown> = {};
  const maxBody = positiveInt(t.maxBodyBytes, '/trigger/options/maxBodyBytes', problems);
  if (maxBody !== undefined) options.maxBodyBytes = maxBody;
  if (list(t.allowedOrigins).length > 0) options.allowedOrigins = list(t.allowedOrigins);
  if (list(t.ipAllowlist).length > 0) options.ipAllowlist = list(t.ipAllowlist);
  const requests = positiveInt(t.rateRequests, '/trigger/options/rateLimit/requests', problems);
  const perSeconds = positiveInt(t.ratePerSeconds, '/trigger/options/rateLimit/perSeconds', problems);
  if (requests !== undefined && perSeconds !== undefined) options.rateLimit = { requests, perSeconds };
  else if ((requests === undefined) !== (perSeconds === undefined)) {
    problems.push({
      field: '/trigger/options/rateLimit',
      message: 'needs both a number of requests and a period',
    });
  }
  const idempotency: Record<string, unknown> = {};
  if (t.idempotencyHeader.trim()) idempotency.header = t.idempotencyHeader.trim();
  if (t.idempotencyKey.trim()) idempotency.key = t.idempotencyKey.trim();
  const window = positiveInt(t.idempotencyWindow, '/trigger/options/idempotency/windowSeconds', problems);
  if (window !== undefined) idempotency.windowSeconds = window;
  if (Object.keys(idempotency).length > 0) options.idempotency = idempotency;
  if (t.schemaCheck !== 'off') options.schemaCheck = t.schemaCheck;
  const needsToken = t.handshake === 'meta' || t.handshake === 'zoom';
  if (needsToken && t.handshakeToken === '')
    problems.push({
      field: '/trigger/handshakeToken',
      message: t.handshake === 'meta' ? "needs Meta's verify token" : "needs your Zoom app's secret token",
    });

  const alerts = alertsFrom(t, problems);

  return {
    methods: t.methods,
    path: t.path.trim(),
    auth: cleanAuth(t.auth),
    response,
    options,
    ...(alerts ? { alerts } : {}),
    ...(t.handshake ? { handshake: t.handshake } : {}),
    ...(needsToken && t.handshakeToken ? { handshakeToken: t.handshakeToken } : {}),
  };
}

/** trigger.alerts from the form: none without an alert workflow; with one, at least one condition. */
function alertsFrom(t: TriggerDraft, problems: FieldProblem[]) {
  const silenceMinutes = positiveInt(t.alertSilenceMinutes, '/trigger/alerts/silenceMinutes', problems);
  const rejectionsPerMinute = positiveInt(
    t.alertRejectionsPerMinute,
    '/trigger/alerts/rejectionsPerMinute',
    problems,
  );
  if (!t.alertWorkflowId) return undefined;
  if (silenceMinutes === undefined && rejectionsPerMinute === undefined && !t.alertSchemaDrift)
    problems.push({
      field: '/trigger/alerts',
      message: 'says when to alert: a silence, a rate of refusals, or schema drift',
    });
  return {
    workflowId: t.alertWorkflowId,
    ...(silenceMinutes !== undefined ? { silenceMinutes } : {}),
    ...(rejectionsPerMinute !== undefined ? { rejectionsPerMinute } : {}),
    ...(t.alertSchemaDrift ? { schemaDrift: true } : {}),
  };
}

/** settings.concurrency from the form: none without a key; the limit a whole number from 1 to 1000. */
function concurrencyFrom(c: ConcurrencyDraft, problems: FieldProblem[]) {
  const key = c.key.trim();
  const newestWins = c.newestWins.trim();
  const limitText = c.limit.trim();
  if (key === '') {
    if (limitText !== '' || newestWins !== '')
      problems.push({
        field: '/settings/concurrency/key',
        message: 'needs a key: the limit and newest wins apply to executions with equal keys',
      });
    return undefined;
  }
  const limit = Number(limitText);
  if (limitText !== '' && !(Number.isInteger(limit) && limit >= 1 && limit <= 1000))
    problems.push({ field: '/settings/concurrency/limit', message: 'must be a whole number from 1 to 1000' });
  return {
    key,
    ...(limitText !== '' && Number.isInteger(limit) ? { limit } : {}),
    ...(newestWins !== '' ? { newestWins } : {}),
  };
}

export function payloadFrom(d: Draft) {
  const problems: FieldProblem[] = [];
  if (d.name.trim() === '') problems.push({ field: '/name', message: 'needs a name' });
  const trigger = triggerFrom(d.trigger, problems);
  const steps = stepsFrom(d.steps, '/steps', problems);
  // PUT keeps settings left out; `{}` clears them, which is what a form showing none means.
  const searchFields = d.searchFields.filter((p) => p !== '');
  d.searchFields.forEach((path, i) => {
    if (path !== '' && !FIELD_PATH.test(path))
      problems.push({
        field: `/settings/searchFields/${i}`,
        message: 'is not a field path: names in dots, e.g. body.order_id',
      });
  });
  const concurrency = concurrencyFrom(d.concurrency, problems);
  const settings = {
    ...(concurrency ? { concurrency } : {}),
    ...(d.errorWorkflowId ? { errorWorkflowId: d.errorWorkflowId } : {}),
    ...(searchFields.length > 0 ? { searchFields } : {}),
  };
  return { body: { name: d.name.trim(), trigger, steps, settings }, problems };
}
