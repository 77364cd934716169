import { describe, expect, it } from 'vitest';
import { validateSteps } from '../../../src/engine/validate.js';
import { respondStep } from '../../../src/engine/steps/respond.js';
import { stepContext } from './helpers.js';

describe('respond step', () => {
  it('builds status, headers and body', async () => {
    const out = await respondStep.run(
      { status: 201, headers: { 'X-Id': 'abc', 'x-n': 3 }, body: { ok: true } },
      stepContext({ a: 1 }),
    );
    const response = { status: 201, headers: { 'x-id': 'abc', 'x-n': '3' }, body: { ok: true } };
    expect(out).toEqual({ output: response, response });
  });

  it('defaults to 200 and the input item as body', async () => {
    const out = await respondStep.run({}, stepContext({ a: 1 }));
    expect(out.output).toEqual({ status: 200, headers: {}, body: { a: 1 } });
  });

  it('sends null when the body expression found nothing', async () => {
    const out = await respondStep.run({ body: undefined }, stepContext({ a: 1 }));
    expect(out.output).toEqual({ status: 200, headers: {}, body: null });
  });

  it('refuses a header value with a line break', () => {
    expect(() => respondStep.run({ headers: { 'x-a': 'a\r\nset-cookie: x=1' } }, stepContext())).toThrow(
      'line break',
    );
  });

  it.each([
    [{ status: 99 }, '/steps/0/status'],
    [{ status: 'ok' }, '/steps/0/status'],
    [{ headers: { 'bad header': 'x' } }, '/steps/0/headers/bad header'],
    [{ headers: { 'Content-Length': '1' } }, '/steps/0/headers/Content-Length'],
    [{ headers: { 'x-name': 'Ā' } }, '/steps/0/headers/x-name'],
  ])('refuses %j on save', (config, field) => {
    expect(validateSteps([{ name: 'r', type: 'respond', ...config }])[0]?.field).toBe(field);
  });

  it('fails on a rendered header value it could not send as it is', () => {
    expect(() => respondStep.run({ headers: { 'x-name': 'Ā' } }, stepContext())).toThrow(
      'contains a character outside ASCII (U+0100 at position 0)',
    );
  });

  it('leaves a header value with an expression to be checked when it runs', () => {
    expect(validateSteps([{ name: 'r', type: 'respond', headers: { 'x-name': 'Ā{{ body.x }}' } }])).toEqual(
      [],
    );
  });

  it('accepts expressions for status', () => {
    expect(validateSteps([{ name: 'r', type: 'respond', status: '{{ 200 + 1 }}' }])).toEqual([]);
  });
});
