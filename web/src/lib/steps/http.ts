import type { FieldProblem } from '../../api';
import type { StepDraft, StepForm } from './types';
import { numberish, reservedRowNames, rowsTo, textToBody } from './values';

export const httpForm: StepForm = {
  type: 'http',
  label: 'HTTP request',
  description: 'Call another service',
  keys: ['method', 'url', 'headers', 'query', 'body', 'timeoutMs', 'failOnError', 'credential', 'retry'],
  start: () => ({ url: 'https://', method: 'POST' }),
  write(d, step, at, problems) {
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
    if (d.credential !== '') step.credential = d.credential;
    const retry = retryFrom(d, at, problems);
    if (retry) step.retry = retry;
  },
};

/** What `retry.on` may name (src/engine/steps/http.ts): a network error, a 429, any 5xx. */
export const RETRY_ON = ['network', '429', '5xx'] as const;

function wholeNumber(text: string, min: number, max: number): number | undefined {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return undefined;
  const n = Number(t);
  return n >= min && n <= max ? n : undefined;
}

/** The form's retry as the API takes it: none when attempts is blank. */
function retryFrom(d: StepDraft, at: string, problems: FieldProblem[]): Record<string, unknown> | undefined {
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
