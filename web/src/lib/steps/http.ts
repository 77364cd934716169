import type { FieldProblem } from '../../api';
import { type RetryDraft, retryDraftFrom } from './retry';
import type { DraftOf, Row, StepForm } from './types';
import {
  bodyToText,
  clip,
  looksLikeJson,
  numberish,
  reservedRowNames,
  rowsFrom,
  rowsTo,
  textToBody,
  valueToText,
} from './values';

export type HttpDraft = DraftOf<
  'http',
  RetryDraft & {
    method: string;
    url: string;
    headers: Row[];
    query: Row[];
    body: string;
    timeoutMs: string;
    failOnError: boolean;
    /** The id of the credential applied at run time (SPEC 7c); '' for none. */
    credential: string;
  }
>;

export const httpForm: StepForm<HttpDraft> = {
  type: 'http',
  label: 'HTTP request',
  description: 'Call another service',
  icon: '⇄',
  keys: ['method', 'url', 'headers', 'query', 'body', 'timeoutMs', 'failOnError', 'credential', 'retry'],
  read: (step) => ({
    method: typeof step.method === 'string' ? step.method : 'GET',
    url: valueToText(step.url),
    headers: rowsFrom(step.headers),
    query: rowsFrom(step.query),
    body: bodyToText(step.body),
    timeoutMs: step.timeoutMs === undefined ? '' : String(step.timeoutMs),
    failOnError: step.failOnError !== false,
    credential: typeof step.credential === 'string' ? step.credential : '',
    ...retryDraftFrom(step.retry, RETRY_ON),
  }),
  start: () => ({ url: '', method: 'POST' }),
  summary: (d) => `${d.method} ${clip(d.url) || '(no URL yet)'}`,
  write(d, step, at, problems) {
    step.method = d.method;
    step.url = d.url;
    const urlProblem = httpUrlProblem(d.url);
    if (urlProblem) problems.push({ field: `${at}/url`, message: urlProblem });
    reservedRowNames(d.headers, `${at}/headers`, problems);
    reservedRowNames(d.query, `${at}/query`, problems);
    const headers = rowsTo(d.headers);
    if (headers) step.headers = headers;
    const query = rowsTo(d.query);
    if (query) step.query = query;
    const body = textToBody(d.body);
    if (body !== undefined) step.body = body;
    // The engine sends a string body as text/plain: JSON that does not parse would go out so unnoticed.
    if (
      typeof body === 'string' &&
      looksLikeJson(d.body) &&
      !d.headers.some((h) => h.name.trim().toLowerCase() === 'content-type')
    )
      problems.push({
        field: `${at}/body`,
        message:
          'looks like JSON but is not (it would be sent as text/plain): fix it, or add a content-type header to send it as text',
      });
    const timeout = numberish(d.timeoutMs);
    if (timeout !== undefined) step.timeoutMs = timeout;
    if (!d.failOnError) step.failOnError = false;
    if (d.credential !== '') step.credential = d.credential;
    const retry = retryFrom(d, at, problems);
    if (retry) step.retry = retry;
  },
};

const SCHEMES = ['http://', 'https://'];

/**
 * What is wrong with an http step's URL as written, as the server will see it once its expressions
 * are filled in (src/engine/steps/http.ts: an absolute http(s) URL, no user name or password).
 * Only the literal text before the first `{{` is checked when there is an expression: a URL that
 * is all expression is checked when it runs. `typing`: the field is being filled in, so a scheme
 * still being typed ("htt") and an empty field are not problems yet.
 */
export function httpUrlProblem(raw: string, typing = false): string | undefined {
  const url = raw.trim();
  if (url === '') return typing ? undefined : 'needs a URL (http:// or https://)';
  const open = url.indexOf('{{');
  const literal = (open === -1 ? url : url.slice(0, open)).toLowerCase();
  if (literal === '') return undefined;
  if (/^https?:\/\/https?:\/?\/?/.test(literal)) return 'has the scheme twice ("https://http://…")';
  if (!SCHEMES.some((s) => literal.startsWith(s))) {
    if (typing && SCHEMES.some((s) => s.startsWith(literal))) return undefined;
    return 'must start with http:// or https://';
  }
  if (open !== -1) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (parsed.username || parsed.password)
    return 'must not carry a user name or password: use a credential instead';
  return undefined;
}

/** What `retry.on` may name (src/engine/steps/http.ts): a network error, a 429, any 5xx. */
export const RETRY_ON = ['network', '429', '5xx'] as const;

function wholeNumber(text: string, min: number, max: number): number | undefined {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return undefined;
  const n = Number(t);
  return n >= min && n <= max ? n : undefined;
}

/** The form's retry as the API takes it: none when attempts is blank. */
function retryFrom(d: RetryDraft, at: string, problems: FieldProblem[]): Record<string, unknown> | undefined {
  if (d.retryAttempts.trim() === '') return undefined;
  const retry: Record<string, unknown> = {};
  const attempts = wholeNumber(d.retryAttempts, 1, 50);
  if (attempts === undefined)
    problems.push({ field: `${at}/retry/attempts`, message: 'must be a whole number from 1 to 50' });
  retry.attempts = attempts ?? d.retryAttempts;
  if (d.retryBackoffMs.trim() !== '') {
    const backoff = wholeNumber(d.retryBackoffMs, 1, 3_600_000);
    if (backoff === undefined)
      problems.push({
        field: `${at}/retry/backoffMs`,
        message: 'must be a whole number of milliseconds (1 to 3600000)',
      });
    retry.backoffMs = backoff ?? d.retryBackoffMs;
  }
  const on = RETRY_ON.filter((o) => d.retryOn.includes(o));
  if (d.retryOnSet || on.length !== RETRY_ON.length) retry.on = on;
  return retry;
}
