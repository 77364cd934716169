/**
 * The respond step's header rules against node:http's own (response-headers.ts copies them, as
 * the UI's preview imports that file): every name Node refuses is refused, every value Node refuses
 * is refused, and the only values refused beyond Node's are those with 0x80–0xFF (sent as UTF-8 or
 * Latin-1 depending on the body, so not as the execution recorded them).
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { describe, expect, it } from 'vitest';
import { headerValueProblem, responseHeaders } from '../../../src/shared/response-headers.js';

const nodeAccepts = (check: () => void): boolean => {
  try {
    check();
    return true;
  } catch {
    return false;
  }
};

const refuse = (name: string, message: string): never => {
  throw new Error(`${name}: ${message}`);
};
const accepts = (headers: Record<string, unknown>): boolean =>
  nodeAccepts(() => responseHeaders(headers, refuse));

// Every UTF-16 code unit up to U+02FF, plus a few far ones (an astral character's surrogates).
const CHARS = [...Array.from({ length: 0x300 }, (_, i) => String.fromCharCode(i)), '\u2028', '😀', '\uFFFD'];

describe('response header rules', () => {
  const hex = (c: string) => `U+${c.codePointAt(0)!.toString(16).padStart(4, '0')}`;

  it('sends a value exactly when Node sends it as written', () => {
    const differ = CHARS.filter((c) => {
      const value = `a${c}b`;
      const code = c.codePointAt(0)!;
      const expected = nodeAccepts(() => validateHeaderValue('x-a', value)) && (code < 0x80 || code > 0xff);
      return (
        (headerValueProblem('x-a', value) === undefined) !== expected ||
        accepts({ 'x-a': value }) !== expected
      );
    });
    expect(differ.map(hex)).toEqual([]);
  });

  it('accepts a name exactly when Node accepts it', () => {
    const differ = CHARS.filter(
      (c) => accepts({ [`x${c}`]: 'v' }) !== nodeAccepts(() => validateHeaderName(`x${c}`)),
    );
    expect(differ.map(hex)).toEqual([]);
  });

  it('says which character, where, and how to send other text', () => {
    expect(headerValueProblem('x-name', 'caĀ')).toBe(
      'The value of header "x-name" contains a character outside ASCII (U+0100 at position 2); header ' +
        'values are sent as ASCII text without control characters: encode other text with ' +
        '$encodeUrlComponent() or $base64encode().',
    );
    expect(headerValueProblem('x', 'a\r\nb')).toContain('a line break (U+000D at position 1)');
    expect(headerValueProblem('x', 'a\u0007')).toContain('a control character (U+0007');
  });

  it('checks values that are not strings as the JSON sent', () => {
    expect(accepts({ 'x-a': { name: 'é' } })).toBe(false);
    expect(responseHeaders({ 'x-a': { n: 1 }, 'x-b': 2 }, refuse)).toEqual({ 'x-a': '{"n":1}', 'x-b': '2' });
  });
});
