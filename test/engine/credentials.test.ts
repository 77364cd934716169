/**
 * The scrubber (engine/credentials.ts): every form in which a remote server may echo a credential
 * back is masked, in values (strings, keys, nested) and in bytes (a body stored as base64 or text),
 * and nothing else is touched.
 */
import { describe, expect, it } from 'vitest';
import { applyCredential, scrub, scrubber } from '../../src/engine/credentials.js';

const SECRET = 'S3cr/t +key&é=1';
const utf8 = Buffer.from(SECRET, 'utf8');
/** Every byte percent-encoded, with the given hex case. */
const everyByte = (upper: boolean) =>
  [...utf8]
    .map((b) => `%${b.toString(16).padStart(2, '0')[upper ? 'toUpperCase' : 'toLowerCase']()}`)
    .join('');

describe('scrub: the forms of a secret', () => {
  it.each([
    ['as it is', SECRET],
    ['encodeURIComponent (upper-case hex)', encodeURIComponent(SECRET)],
    [
      'encodeURIComponent with lower-case hex',
      encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
    ],
    ['form-encoded, + for space (URLSearchParams)', new URLSearchParams({ v: SECRET }).toString().slice(2)],
    ['encodeURI (some characters left as they are)', encodeURI(SECRET)],
    ['every byte percent-encoded, upper-case', everyByte(true)],
    ['every byte percent-encoded, lower-case', everyByte(false)],
    ['mixed hex case and half decoded', 'S3cr%2ft%20%2Bkey%26%C3%a9=1'],
    ['base64', utf8.toString('base64')],
    ['base64url, unpadded', utf8.toString('base64url')],
  ])('masks the secret %s', (_name, form) => {
    const out = scrub({ echoed: `before ${form} after`, [`k-${form}`]: [form] }, [SECRET]);
    const text = JSON.stringify(out);
    expect(text).toContain('***');
    expect(text).not.toContain(form);
    expect(out).toMatchObject({ echoed: 'before *** after', 'k-***': ['***'] });
  });

  it.each([
    ['the raw UTF-8 bytes', utf8],
    ['form-encoded bytes', Buffer.from(new URLSearchParams({ v: SECRET }).toString().slice(2))],
    ['lower-case hex escapes', Buffer.from(everyByte(false))],
    ['UTF-16LE', Buffer.from(SECRET, 'utf16le')],
    ['UTF-16BE', Buffer.from(SECRET, 'utf16le').swap16()],
  ])('masks %s inside binary bytes', (_name, form) => {
    const body = Buffer.concat([Buffer.from([0, 255, 1]), form, Buffer.from([254, 0])]);
    const out = scrubber([SECRET]).bytes(body);
    expect(out.includes(form)).toBe(false);
    expect(out).toEqual(Buffer.concat([Buffer.from([0, 255, 1]), Buffer.from('***'), Buffer.from([254, 0])]));
  });

  it('returns the same value and bytes when there is nothing to mask', () => {
    const s = scrubber([SECRET]);
    const bytes = Buffer.from([0, 1, 2, 255]);
    expect(s.bytes(bytes)).toBe(bytes);
    expect(s.value({ a: ['S3cr', 'key', 1, null, true] })).toEqual({ a: ['S3cr', 'key', 1, null, true] });
  });

  it('masks a secret however deep it is nested (past 1 000 levels, the subtree goes whole)', () => {
    const nest = (depth: number): unknown => {
      let v: unknown = { at: SECRET };
      for (let i = 0; i < depth; i++) v = [v];
      return v;
    };
    expect(JSON.stringify(scrub(nest(100), [SECRET]))).toBe(
      `${'['.repeat(100)}{"at":"***"}${']'.repeat(100)}`,
    );
    const deep = JSON.stringify(scrub(nest(5_000), [SECRET]));
    expect(deep).not.toContain(SECRET);
    expect(deep).toContain('"***"');
  });

  it.each([
    // A secret this short would mask every occurrence of common text and hide nothing worth hiding.
    ['a secret under 4 characters', ['abc'], 'abc abc', 'abc abc'],
    ['no secrets', [], 'anything', 'anything'],
    ['the longest secret first', ['Bearer tok-1234', 'tok-1234'], 'Bearer tok-1234 / tok-1234', '*** / ***'],
    ['regular-expression characters taken literally', ['a.b*c+(d)'], 'axbbbcd a.b*c+(d)', 'axbbbcd ***'],
    ['case kept for the value itself', ['Token-ABCD'], 'token-abcd Token-ABCD', 'token-abcd ***'],
  ])('handles %s', (_name, secrets, input, expected) => {
    expect(scrub(input, secrets)).toBe(expected);
  });

  it.each([
    ['bearer', { token: 'tok-1234' }, ['tok-1234']],
    ['header', { name: 'X-Key', value: 'hdr-1234' }, ['hdr-1234']],
    [
      'basic',
      { username: 'alice', password: 'pw-1234' },
      ['pw-1234', Buffer.from('alice:pw-1234').toString('base64')],
    ],
    ['query', { name: 'key', value: 'q 1234&' }, ['q 1234&', 'q+1234%26', 'q%201234%26']],
  ] as const)('masks what a %s credential puts on the wire, echoed', (type, data, echoes) => {
    const applied = applyCredential({ type, data: { ...data } }, new URL('http://x/'), {});
    for (const echo of echoes) expect(scrub(`got ${echo}!`, applied.secrets), echo).toBe('got ***!');
  });
});
