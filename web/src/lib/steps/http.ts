import type { StepForm } from './types';
import { numberish, reservedRowNames, rowsTo, textToBody } from './values';

export const httpForm: StepForm = {
  type: 'http',
  label: 'HTTP request',
  description: 'Call another service',
  keys: ['method', 'url', 'headers', 'query', 'body', 'timeoutMs', 'failOnError', 'credential'],
  init(d) {
    d.url = 'https://';
    d.method = 'POST';
  },
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
  },
};
