import type { DraftOf, Row, StepForm } from './types';
import { bodyToText, numberish, reservedRowNames, rowsFrom, rowsTo, textToBody } from './values';

export type RespondDraft = DraftOf<'respond', { status: string; headers: Row[]; body: string }>;

export const respondForm: StepForm<RespondDraft> = {
  type: 'respond',
  label: 'Respond',
  description: 'Answer the webhook call',
  icon: '↩',
  keys: ['status', 'headers', 'body'],
  read: (step) => ({
    status: step.status === undefined ? '' : String(step.status),
    headers: rowsFrom(step.headers),
    body: bodyToText(step.body),
  }),
  summary: (d) => `Answers ${d.status || '200'}`,
  write(d, step, at, problems) {
    const status = numberish(d.status);
    if (status !== undefined) step.status = status;
    reservedRowNames(d.headers, `${at}/headers`, problems);
    const headers = rowsTo(d.headers);
    if (headers) step.headers = headers;
    const body = textToBody(d.body);
    if (body !== undefined) step.body = body;
  },
};
