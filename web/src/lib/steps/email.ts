import type { FieldProblem } from '../../api';
import type { Step } from '../../types';
import { type RetryDraft, retryDraftFrom } from './retry';
import type { DraftOf, StepForm } from './types';
import { bodyToText, clip, numberish, textToBody, valueToText } from './values';

/** The email step's message fields as the form edits them (SPEC 7e; src/engine/steps/email.ts). */
export interface EmailFields {
  to: string;
  cc: string;
  bcc: string;
  replyTo: string;
  subject: string;
  text: string;
  html: string;
  /** File references: an expression (`{{ $trigger.files }}`) or a JSON list of them. */
  attachments: string;
  failOnRejected: boolean;
}

export type EmailDraft = DraftOf<
  'email',
  EmailFields & RetryDraft & { credential: string; timeoutMs: string }
>;

export const EMAIL_TEXT_KEYS = ['to', 'cc', 'bcc', 'replyTo', 'subject', 'text', 'html'] as const;

/** What `retry.on` may name on an email step, and what it retries when `on` is left out. */
export const EMAIL_RETRY_ON = ['network', '4xx', '5xx'] as const;
export const EMAIL_RETRY_DEFAULT = ['network', '4xx'] as const;

/** An address field as text: a list of addresses joined with commas (the server takes either). */
function addressesToText(value: unknown): string {
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(', ');
  return valueToText(value);
}

function emailFieldsFrom(step: Step): EmailFields {
  return {
    to: addressesToText(step.to),
    cc: addressesToText(step.cc),
    bcc: addressesToText(step.bcc),
    replyTo: addressesToText(step.replyTo),
    subject: valueToText(step.subject),
    text: valueToText(step.text),
    html: valueToText(step.html),
    attachments: step.attachments === undefined ? '' : bodyToText(step.attachments),
    failOnRejected: step.failOnRejected !== false,
  };
}

export const emailForm: StepForm<EmailDraft> = {
  type: 'email',
  label: 'Email',
  description: 'Send an email through an SMTP server',
  icon: '✉',
  keys: [...EMAIL_TEXT_KEYS, 'attachments', 'failOnRejected', 'credential', 'timeoutMs', 'retry'],
  read: (step) => ({
    ...emailFieldsFrom(step),
    credential: typeof step.credential === 'string' ? step.credential : '',
    timeoutMs: step.timeoutMs === undefined ? '' : String(step.timeoutMs),
    ...retryDraftFrom(step.retry, EMAIL_RETRY_ON),
  }),
  summary: (d) => (d.to.trim() ? `To ${clip(d.to)}` : 'No recipient yet'),
  write(d, step, at, problems) {
    if (d.credential === '')
      problems.push({ field: `${at}/credential`, message: 'needs an SMTP credential' });
    step.credential = d.credential;
    if (d.to.trim() === '') problems.push({ field: `${at}/to`, message: 'needs at least one address' });
    step.to = d.to;
    for (const key of EMAIL_TEXT_KEYS) if (key !== 'to' && d[key] !== '') step[key] = d[key];
    const attachments = textToBody(d.attachments);
    if (attachments !== undefined) step.attachments = attachments;
    if (!d.failOnRejected) step.failOnRejected = false;
    const timeout = numberish(d.timeoutMs);
    if (timeout !== undefined) step.timeoutMs = timeout;
    const retry = emailRetry(d, at, problems);
    if (retry) step.retry = retry;
  },
};

/** The form's retry as the API takes it (none when attempts is blank); `on` only when changed. */
function emailRetry(
  d: RetryDraft,
  at: string,
  problems: FieldProblem[],
): Record<string, unknown> | undefined {
  const attemptsText = d.retryAttempts.trim();
  if (attemptsText === '') return undefined;
  const attempts = /^\d+$/.test(attemptsText) ? Number(attemptsText) : Number.NaN;
  if (!(attempts >= 1 && attempts <= 50))
    problems.push({ field: `${at}/retry/attempts`, message: 'must be a whole number from 1 to 50' });
  const retry: Record<string, unknown> = { attempts: Number.isNaN(attempts) ? attemptsText : attempts };
  const backoff = numberish(d.retryBackoffMs);
  if (backoff !== undefined) retry.backoffMs = backoff;
  if (d.retryOnSet) retry.on = EMAIL_RETRY_ON.filter((o) => d.retryOn.includes(o));
  return retry;
}
