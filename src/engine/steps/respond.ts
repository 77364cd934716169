/**
 * `respond`: the answer to the webhook call when the trigger's response mode is `respondStep`
 * (SPEC 5): status, headers and body, usually built from expressions. Without `body` the input
 * item is sent. The run goes on after it; the first `respond` step that runs is the answer.
 */
import Type from 'typebox';
import type { FieldError } from '../../errors.js';
import { pointerEscape } from '../expressions.js';
import {
  headerValueProblem,
  RESERVED_RESPONSE_HEADERS,
  responseHeaders,
} from '../../shared/response-headers.js';
import { defineStep, Expr, HeaderMap, StepFailure } from './types.js';

export const respondStep = defineStep({
  type: 'respond',
  pure: true,
  description: 'Set the status, headers and body of the webhook response (response mode `respondStep`).',
  config: Type.Object(
    {
      status: Type.Optional(Expr(Type.Integer({ minimum: 200, maximum: 599 }))),
      headers: Type.Optional(HeaderMap()),
      body: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: false },
  ),
  check(config) {
    const errors: FieldError[] = [];
    for (const [name, value] of Object.entries(config.headers ?? {})) {
      if (RESERVED_RESPONSE_HEADERS.has(name.toLowerCase())) {
        errors.push({
          field: `/headers/${pointerEscape(name)}`,
          message: 'is set by the server and cannot be set by a step',
        });
      }
      // A plain value is known now; one with an expression is checked when it is rendered.
      const problem =
        typeof value === 'string' && !value.includes('{{') ? headerValueProblem(name, value) : undefined;
      if (problem) errors.push({ field: `/headers/${pointerEscape(name)}`, message: problem });
    }
    return errors;
  },
  run(config, { input }) {
    const headers = responseHeaders(config.headers ?? {}, (name, message) => {
      throw new StepFailure(message, { field: `/headers/${pointerEscape(name)}` });
    });
    const body = 'body' in config ? config.body : input;
    const response = { status: config.status ?? 200, headers, body: body === undefined ? null : body };
    return { output: response, response };
  },
});
