/**
 * `respond`: the answer to the webhook call when the trigger's response mode is `respondStep`
 * (SPEC 5): status, headers and body, usually built from expressions. Without `body` the input
 * item is sent. The run goes on after it; the first `respond` step that runs is the answer.
 */
import Type from 'typebox';
import type { FieldError } from '../../errors.js';
import { pointerEscape } from '../expressions.js';
import { defineStep, Expr, HeaderMap, StepFailure } from './types.js';

/** Framing headers belong to the server that sends the response, not to the workflow. */
const RESERVED = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'trailer',
  'te',
]);

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
    for (const name of Object.keys(config.headers ?? {})) {
      if (RESERVED.has(name.toLowerCase())) {
        errors.push({
          field: `/headers/${pointerEscape(name)}`,
          message: 'is set by the server and cannot be set by a step',
        });
      }
    }
    return errors;
  },
  async run(config, { input }) {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(config.headers ?? {})) {
      if (value === undefined || value === null || RESERVED.has(name.toLowerCase())) continue;
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      // A line break in a header value would split the response: refuse rather than send it.
      if (/[\r\n\0]/.test(text)) {
        throw new StepFailure(`The value of header "${name}" contains a line break.`, {
          field: `/headers/${pointerEscape(name)}`,
        });
      }
      headers[name.toLowerCase()] = text;
    }
    const body = 'body' in config ? config.body : input;
    const response = { status: config.status ?? 200, headers, body: body === undefined ? null : body };
    return { output: response, response };
  },
});
