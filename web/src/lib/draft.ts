/**
 * The editor's form state for a workflow and its conversion to the API's payload. Forms edit text
 * (an expression, a number being typed, a list of names and values); the payload is JSON. Keys the
 * form does not know are kept as they were, so saving never drops configuration.
 */
import type { FieldProblem } from '../api';
import type { AuthConfig, Method, ResponseMode, Step, Workflow } from '../types';
import { normalizePath } from '../../../src/shared/path';

export const MASK = '***';

export interface Row {
  key: string;
  name: string;
  value: string;
}

export interface StepDraft {
  key: string;
  name: string;
  type: string;
  /** set */
  fields: Row[];
  keepInput: boolean;
  /** filter */
  condition: string;
  /** http */
  method: string;
  url: string;
  query: Row[];
  timeoutMs: string;
  failOnError: boolean;
  /** http and respond */
  headers: Row[];
  body: string;
  /** respond */
  status: string;
  /** A type this UI has no form for: its configuration as JSON text. */
  raw: string;
  /** Configuration keys the form does not edit. */
  extra: Record<string, unknown>;
}

export interface TriggerDraft {
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
}

export interface Draft {
  name: string;
  trigger: TriggerDraft;
  steps: StepDraft[];
}

export const STEP_TYPES: { type: string; label: string; description: string }[] = [
  { type: 'set', label: 'Set fields', description: 'Build an item from named fields' },
  { type: 'filter', label: 'Filter', description: 'Stop the run unless a condition is true' },
  { type: 'http', label: 'HTTP request', description: 'Call another service' },
  { type: 'respond', label: 'Respond', description: 'Answer the webhook call' },
];

let counter = 0;
export const newKey = () => `k${++counter}`;

export const row = (name = '', value = ''): Row => ({ key: newKey(), name, value });

/** A stored value as form text: strings as they are; other JSON as a typed expression `{{ 42 }}`. */
export function valueToText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return `{{ ${JSON.stringify(value)} }}`;
}

function rowsFrom(record: unknown): Row[] {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return [];
  return Object.entries(record).map(([k, v]) => row(k, valueToText(v)));
}

function rowsTo(rows: Row[]): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const r of rows) {
    const name = r.name.trim();
    // defineProperty, as the engine does: assigning "__proto__" would set the prototype and lose
    // the row, so the payload would not even change (and Save would stay disabled).
    if (name !== '')
      Object.defineProperty(out, name, {
        value: r.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The API's JSON parser removes every `__proto__` key (src/http/server.ts, secure-json-parse with
 * protoAction "remove"), so a header or query parameter of that name would vanish on save: say so.
 */
function reservedRowNames(rows: Row[], at: string, problems: FieldProblem[]): void {
  rows.forEach((r, i) => {
    if (r.name.trim() === '__proto__')
      problems.push({ field: `${at}/${i}`, message: 'uses the reserved name "__proto__"' });
  });
}

/** The set step's own check (src/engine/steps/set.ts): no part of a field name may be one of these. */
const RESERVED_FIELD_PARTS = new Set(['__proto__', 'prototype', 'constructor']);

function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/**
 * Body text and body value. The rule: text that is one JSON value (an object, an array, a number,
 * true, false, null, or a "quoted string") is that value; any other text is a string as typed, so
 * `{"id": "{{ body.id }}"}` is an object with an expression inside and `Thanks {{ name }}` is text.
 * A stored string that would read back as something else (`42`, `{"a":1}`, a blank one) is shown
 * as a quoted JSON string, so opening and saving a workflow never changes its body.
 */
export function bodyToText(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return textToBody(value) === value ? value : JSON.stringify(value);
  return JSON.stringify(value, null, 2);
}

export function textToBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  const parsed = parseJson(text);
  // `1e999` parses as Infinity, which JSON cannot carry (it would be sent as null): it stays text.
  if (parsed === undefined || (typeof parsed.value === 'number' && !Number.isFinite(parsed.value)))
    return text;
  return parsed.value;
}

/** A number field that may also hold an expression. */
function numberish(text: string): number | string | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  return /^\d+$/.test(t) ? Number(t) : t;
}

const KNOWN_KEYS: Record<string, string[]> = {
  set: ['fields', 'keepInput'],
  filter: ['condition'],
  http: ['method', 'url', 'headers', 'query', 'body', 'timeoutMs', 'failOnError'],
  respond: ['status', 'headers', 'body'],
};

export function stepDraftFrom(step: Step): StepDraft {
  // An own-property lookup: a type named "constructor" or "toString" has no form, like any other.
  const known = Object.hasOwn(KNOWN_KEYS, step.type) ? KNOWN_KEYS[step.type] : undefined;
  const extra: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(step)) {
    if (k === 'name' || k === 'type') continue;
    rest[k] = v;
    if (known && !known.includes(k)) extra[k] = v;
  }
  return {
    key: newKey(),
    name: step.name,
    type: step.type,
    fields: rowsFrom(step.fields),
    keepInput: step.keepInput === true,
    condition: valueToText(step.condition),
    method: typeof step.method === 'string' ? step.method : 'GET',
    url: valueToText(step.url),
    query: rowsFrom(step.query),
    timeoutMs: step.timeoutMs === undefined ? '' : String(step.timeoutMs),
    failOnError: step.failOnError !== false,
    headers: rowsFrom(step.headers),
    body: bodyToText(step.body),
    status: step.status === undefined ? '' : String(step.status),
    raw: known ? '' : JSON.stringify(rest, null, 2),
    extra,
  };
}

export function newStep(type: string, existing: StepDraft[]): StepDraft {
  const names = new Set(existing.map((s) => s.name));
  let name = type;
  for (let i = 2; names.has(name); i++) name = `${type}${i}`;
  const draft = stepDraftFrom({ name, type });
  if (type === 'set') draft.fields = [row()];
  if (type === 'filter') draft.condition = '';
  if (type === 'http') draft.url = 'https://';
  if (type === 'http') draft.method = 'POST';
  return draft;
}

/** The step as the API takes it; problems the form can see before the server does. */
export function stepFrom(d: StepDraft, index: number, problems: FieldProblem[]): Step {
  const at = `/steps/${index}`;
  const step: Step = { name: d.name.trim(), type: d.type, ...d.extra };
  if (step.name === '') problems.push({ field: `${at}/name`, message: 'needs a name' });
  switch (d.type) {
    case 'set': {
      const seen = new Set<string>();
      d.fields.forEach((r, i) => {
        const name = r.name.trim();
        if (name === '' && r.value.trim() !== '')
          problems.push({ field: `${at}/fields/${i}`, message: 'has a value but no field name' });
        if (name !== '' && seen.has(name))
          problems.push({ field: `${at}/fields/${i}`, message: `sets "${name}" twice` });
        if (name.split('.').some((part) => RESERVED_FIELD_PARTS.has(part)))
          problems.push({
            field: `${at}/fields/${i}`,
            message: 'uses a reserved name (__proto__, prototype, constructor)',
          });
        seen.add(name);
      });
      step.fields = rowsTo(d.fields) ?? {};
      if (d.keepInput) step.keepInput = true;
      break;
    }
    case 'filter':
      step.condition = d.condition;
      if (d.condition.trim() === '')
        problems.push({ field: `${at}/condition`, message: 'needs a condition' });
      break;
    case 'http': {
      step.method = d.method;
      step.url = d.url;
      reservedRowNames(d.headers, `${at}/headers`, problems);
      reservedRowNames(d.query, `${at}/query`, problems);
      const headers = rowsTo(d.headers);
      if (headers) step.headers = headers;
      const query = rowsTo(d.query);
      if (query) step.query = query;
      const body = textToBody(d.body);
      if (body !== undefined) step.body = body;
      const timeout = numberish(d.timeoutMs);
      if (timeout !== undefined) step.timeoutMs = timeout;
      if (!d.failOnError) step.failOnError = false;
      break;
    }
    case 'respond': {
      const status = numberish(d.status);
      if (status !== undefined) step.status = status;
      reservedRowNames(d.headers, `${at}/headers`, problems);
      const headers = rowsTo(d.headers);
      if (headers) step.headers = headers;
      const body = textToBody(d.body);
      if (body !== undefined) step.body = body;
      break;
    }
    default:
      try {
        const parsed = d.raw.trim() === '' ? {} : JSON.parse(d.raw);
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
          throw new Error('not an object');
        Object.assign(step, parsed, { name: step.name, type: d.type });
      } catch {
        problems.push({ field: `${at}/raw`, message: 'is not a JSON object' });
      }
  }
  return step;
}

export function draftFrom(w: Workflow): Draft {
  const t = w.trigger;
  const o = t.options ?? {};
  const r = t.response ?? { mode: 'immediately' };
  return {
    name: w.name,
    trigger: {
      methods: [...t.methods],
      path: t.path,
      auth: { ...t.auth },
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
    },
    steps: w.steps.map(stepDraftFrom),
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

export function triggerFrom(t: TriggerDraft, problems: FieldProblem[]) {
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

  return {
    methods: t.methods,
    path: t.path.trim(),
    auth: cleanAuth(t.auth),
    response,
    options,
  };
}

export function payloadFrom(d: Draft) {
  const problems: FieldProblem[] = [];
  if (d.name.trim() === '') problems.push({ field: '/name', message: 'needs a name' });
  const trigger = triggerFrom(d.trigger, problems);
  const names = new Set<string>();
  const steps = d.steps.map((s, i) => {
    const step = stepFrom(s, i, problems);
    if (step.name !== '' && names.has(step.name))
      problems.push({ field: `/steps/${i}/name`, message: `"${step.name}" is used by another step` });
    names.add(step.name);
    return step;
  });
  return { body: { name: d.name.trim(), trigger, steps }, problems };
}
