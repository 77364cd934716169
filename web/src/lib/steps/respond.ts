import type { StepForm } from './types';
import { numberish, reservedRowNames, rowsTo, textToBody } from './values';

export const respondForm: StepForm = {
  type: 'respond',
  label: 'Respond',
  description: 'Answer the webhook call',
  keys: ['status', 'headers', 'body'],
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
