import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import {
  DEFAULT_PARSE_LIMITS,
  type ParseLimits,
  parseBody,
  parseFlatUrlEncoded,
  parseQuery,
  parseUrlEncodedWithQs,
} from '../../src/webhooks/parse/index.js';

const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();

// Every test, whatever it parsed, must leave Object.prototype exactly as it found it.
afterEach(() => {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTO_NAMES);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const limits = (overrides: Partial<ParseLimits>): ParseLimits => ({ ...DEFAULT_PARSE_LIMITS, ...overrides });

/** The promise rejects with AppError('invalid_body') whose message matches `message`. */
async function expectInvalid(promise: Promise<unknown>, message: RegExp): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  const appErr = err as AppError;
  expect(appErr.code).toBe('invalid_body');
  expect(appErr.status).toBe(400);
  expect(appErr.message).toMatch(message);
  expect(appErr.hint).toBeTruthy();
  return appErr;
}
const rejectsSync = (fn: () => unknown) => new Promise((resolve) => resolve(fn()));

/** Ordinary objects all the way down, and no own `__proto__` key anywhere. */
function expectOrdinary(value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  if (!Array.isArray(value)) {
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(false);
  }
  for (const item of Object.values(value)) expectOrdinary(item);
}

/**
 * A value's structure for exact comparison: key order, prototypes and data properties included.
 * (toStrictEqual compares `.constructor`, which parsed data may carry as an own key.)
 */
function shape(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return ['array', value.map(shape)];
  const kind = Object.getPrototypeOf(value) === Object.prototype ? 'object' : 'other';
  return [
    kind,
    Reflect.ownKeys(value).map((key) => {
      const d = Object.getOwnPropertyDescriptor(value, key)!;
      return [String(key), d.enumerable && d.writable && 'value' in d, shape(d.value)];
    }),
  ];
}

interface Part {
  name: string;
  value?: string;
  filename?: string;
  type?: string;
  data?: Buffer;
}
function multipart(parts: Part[], boundary = 'XyZzy42'): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) head += `; filename="${part.filename}"`;
    if (part.type !== undefined) head += `\r\nContent-Type: ${part.type}`;
    chunks.push(
      Buffer.from(`${head}\r\n\r\n`),
      part.data ?? Buffer.from(part.value ?? ''),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}
const MP = 'multipart/form-data; boundary=XyZzy42';

const nestedKey = (levels: number) => `a${'[b]'.repeat(levels)}=1`;
const nestedJson = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
const manyParams = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=v${i}`).join('&');

describe('parseQuery', () => {
  it.each<[string, Record<string, unknown>]>([
    ['', {}],
    ['a=1', { a: '1' }],
    ['a=1&b=2', { a: '1', b: '2' }],
    ['a=1&a=2&a=3', { a: ['1', '2', '3'] }],
    ['a[]=1&a[]=2', { a: ['1', '2'] }],
    ['a[0]=x&a[1]=y', { a: ['x', 'y'] }],
    ['a[b][c]=d&a[b][e]=f', { a: { b: { c: 'd', e: 'f' } } }],
    ['user[name]=Ann&user[tags][]=x&user[tags][]=y', { user: { name: 'Ann', tags: ['x', 'y'] } }],
    ['q=hello+world%21&n=J%C3%B6rg', { q: 'hello world!', n: 'Jörg' }],
    ['flag&empty=', { flag: '', empty: '' }],
    ['bad=%E0%A4%A', { bad: '%E0%A4%A' }],
    ['?a=1', { a: '1' }],
    ['toString=1&valueOf=2', { toString: '1', valueOf: '2' }],
  ])('%j', (raw, expected) => {
    const result = parseQuery(raw);
    expect(result).toEqual(expected);
    expectOrdinary(result);
  });

  it('keeps 25 repeats of a key as one array (qs would switch to an object after 20)', () => {
    const result = parseQuery(Array.from({ length: 25 }, (_, i) => `a=${i}`).join('&'));
    expect(Array.isArray(result.a)).toBe(true);
    expect(result.a).toHaveLength(25);
  });

  it.each<[string, string, ParseLimits, RegExp]>([
    ['5000 params', manyParams(5000), DEFAULT_PARSE_LIMITS, /query string.*Parameter limit exceeded.*1000/],
    ['maxKeys + 1 params', manyParams(4), limits({ maxKeys: 3 }), /Parameter limit/],
    ['depth 21', nestedKey(21), DEFAULT_PARSE_LIMITS, /depth/],
    ['depth 3 with maxDepth 2', nestedKey(3), limits({ maxDepth: 2 }), /depth/],
    ['array index past maxKeys', 'a[5000]=x', DEFAULT_PARSE_LIMITS, /Array limit/],
  ])('rejects %s', async (_name, raw, lim, message) => {
    await expectInvalid(
      rejectsSync(() => parseQuery(raw, lim)),
      message,
    );
  });

  it.each<[string, ParseLimits]>([
    [manyParams(1000), DEFAULT_PARSE_LIMITS],
    [manyParams(3), limits({ maxKeys: 3 })],
    [nestedKey(20), DEFAULT_PARSE_LIMITS],
    [nestedKey(2), limits({ maxDepth: 2 })],
  ])('accepts input exactly at the limit (%#)', (raw, lim) => {
    expect(() => parseQuery(raw, lim)).not.toThrow();
  });
});

describe('flat query strings and form bodies: the fast path', () => {
  type Charset = 'utf-8' | 'iso-8859-1';
  const flat = (text: string, charset: Charset = 'utf-8', lim = DEFAULT_PARSE_LIMITS, query = false) =>
    parseFlatUrlEncoded(text, charset, lim, query);

  it.each<[string, Charset, Record<string, unknown>]>([
    ['param1=a&param2=b', 'utf-8', { param1: 'a', param2: 'b' }],
    ['a=1&a=2&b=3&a=4', 'utf-8', { a: ['1', '2', '4'], b: '3' }],
    ['q=hello+world%21&n=J%C3%B6rg&k+1=v', 'utf-8', { q: 'hello world!', n: 'Jörg', 'k 1': 'v' }],
    ['flag&empty=&=novalue&&x==y=', 'utf-8', { flag: '', empty: '', x: '=y=' }],
    ['bad=%E0%A4%A&z=%zz+1&p=%', 'utf-8', { bad: '%E0%A4%A', z: '%zz 1', p: '%' }],
    ['n=J%F6rg&m=%C3%B6&e=%u00e9', 'iso-8859-1', { n: 'Jörg', m: 'Ã¶', e: '%u00e9' }],
    ['a.b=1&c..d=2', 'utf-8', { 'a.b': '1', 'c..d': '2' }],
    ['__proto__=1&__proto%5F_=2&a=3', 'utf-8', { a: '3' }],
    ['constructor=x&constructor=y&prototype=z', 'utf-8', { constructor: ['x', 'y'], prototype: 'z' }],
    ['toString=1&hasOwnProperty=2', 'utf-8', { toString: '1', hasOwnProperty: '2' }],
    ['b=1&2=x&1=y', 'utf-8', { 1: 'y', 2: 'x', b: '1' }],
  ])('%j (%s)', (raw, charset, expected) => {
    const result = flat(raw, charset);
    expect(result).toEqual(expected);
    expect(shape(result)).toEqual(
      shape(parseUrlEncodedWithQs(raw, charset, DEFAULT_PARSE_LIMITS, 'form body')),
    );
    expectOrdinary(result);
  });

  it('strips one leading ? from a query string only', () => {
    expect(flat('??a=1', 'utf-8', DEFAULT_PARSE_LIMITS, true)).toEqual({ '?a': '1' });
    expect(flat('?a=1', 'utf-8', DEFAULT_PARSE_LIMITS, true)).toEqual({ a: '1' });
    expect(flat('?a=1')).toEqual({ '?a': '1' });
  });

  it.each<[string, string, ParseLimits]>([
    ['a bracket', 'a[b]=1', DEFAULT_PARSE_LIMITS],
    ['a closing bracket in a value', 'a=b]=c', DEFAULT_PARSE_LIMITS],
    ['an encoded bracket in a key', 'a%5Bb%5D=1', DEFAULT_PARSE_LIMITS],
    ['an encoded bracket in a value', 'a=%5d', DEFAULT_PARSE_LIMITS],
    ['more parameters than maxKeys', 'a=1&b=2&c=3&d=4', limits({ maxKeys: 3 })],
    ['maxDepth 0 (a repeated key would be too deep)', 'a=1', limits({ maxDepth: 0 })],
    ['an unusual maxKeys', 'a=1', limits({ maxKeys: Number.NaN })],
  ])('leaves %s to qs', (_name, raw, lim) => {
    expect(flat(raw, 'utf-8', lim)).toBeUndefined();
  });

  it('takes exactly maxKeys parameters, and qs rejects one more', () => {
    expect(flat(manyParams(1000))).toBeDefined();
    expect(flat(manyParams(3), 'utf-8', limits({ maxKeys: 3 }))).toBeDefined();
    expect(() => parseQuery(manyParams(4), limits({ maxKeys: 3 }))).toThrow(/Parameter limit/);
  });

  it('scans a long run of parameters without `=` in linear time', () => {
    const raw = `${'a&'.repeat(200_000)}b=1`;
    const started = performance.now();
    expect(flat(raw, 'utf-8', limits({ maxKeys: 1_000_000 }))).toMatchObject({ b: '1' });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  // Pieces qs treats specially, so generated strings meet them often: delimiters, every kind of
  // percent sequence (valid, truncated, invalid UTF-8, encoded brackets/delimiters), prototype names,
  // array-index-like keys, lone surrogates, and brackets (which must send the string to qs).
  const FLAT_TOKENS = [
    'a',
    'b',
    'Z',
    '0',
    '1',
    '=',
    '==',
    '&',
    '&&',
    '+',
    '%',
    '%2',
    '%20',
    '%2B',
    '%26',
    '%3D',
    '%3d',
    '%25',
    '%255B',
    '%E2%9C%93',
    '%C3%B6',
    '%C3',
    '%E0%A4%A',
    '%zz',
    '%FF',
    '%F6',
    '%u00e9',
    '.',
    '..',
    '?',
    '??',
    '__proto__',
    '__proto%5F_',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    '__defineGetter__',
    'length',
    'ö',
    '✓',
    '\u{1F600}',
    '\uD800',
    ' ',
    ';',
    ',',
    '#',
    '\0',
    '4294967295',
    '4294967294',
    '-1',
    '01',
    '1e3',
    'utf8',
    'utf8=%26%2310003%3B',
    '&#10003;',
  ];
  const NESTING_TOKENS = [
    '[',
    ']',
    '[]',
    '[0]',
    '[1]',
    '[b]',
    '%5B',
    '%5b',
    '%5D',
    '%5d',
    ']=',
    '%5D=',
    '[__proto__]',
    '[constructor]',
    '[prototype]',
    '[999]',
    '[1000]',
    '[]=',
  ];
  const stringOf = (tokens: string[]) =>
    fc.array(fc.constantFrom(...tokens), { maxLength: 40 }).map((parts) => parts.join(''));
  const flatText = stringOf(FLAT_TOKENS);
  const anyText = fc.oneof(
    flatText,
    stringOf([...FLAT_TOKENS, ...NESTING_TOKENS]),
    fc.string({ unit: 'binary', maxLength: 40 }),
  );
  const charsetArb = fc.constantFrom<Charset>('utf-8', 'iso-8859-1');
  const limitsArb = fc
    .record({
      maxKeys: fc.oneof(fc.constant(1000), fc.integer({ min: 0, max: 6 })),
      maxDepth: fc.oneof(fc.constant(20), fc.integer({ min: 0, max: 3 })),
    })
    .map((lim): ParseLimits => ({ ...DEFAULT_PARSE_LIMITS, ...lim }));
  const outcome = (parse: () => unknown) => {
    try {
      return { value: parse() };
    } catch (err) {
      return { error: (err as Error).message };
    }
  };

  it('returns exactly what qs returns (values, key order, prototypes), or leaves the input to qs', () => {
    let taken = 0;
    fc.assert(
      fc.property(anyText, charsetArb, limitsArb, fc.boolean(), (text, charset, lim, query) => {
        const fast = parseFlatUrlEncoded(text, charset, lim, query);
        const viaQs = outcome(() =>
          parseUrlEncodedWithQs(text, charset, lim, query ? 'query string' : 'form body'),
        );
        if (fast === undefined) return;
        taken++;
        // Never a result where qs throws (parameter limit), and the very same structure otherwise.
        expect(viaQs.error).toBeUndefined();
        expect(shape(fast)).toEqual(shape(viaQs.value));
        // The public entry point takes the fast path here.
        if (query && charset === 'utf-8') expect(shape(parseQuery(text, lim))).toEqual(shape(fast));
      }),
      { numRuns: 3000 },
    );
    // The generators must reach the fast path often, or the property proves little.
    expect(taken).toBeGreaterThan(1000);
  });

  it('takes every flat string within the limits', () => {
    fc.assert(
      fc.property(flatText, charsetArb, fc.boolean(), (text, charset, query) => {
        expect(parseFlatUrlEncoded(text, charset, DEFAULT_PARSE_LIMITS, query)).toBeDefined();
      }),
    );
  });

  it('gives form bodies the same result through parseBody as through qs', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, async (text) => {
        const expected = outcome(() =>
          parseUrlEncodedWithQs(text, 'utf-8', DEFAULT_PARSE_LIMITS, 'form body'),
        );
        const got = await parseBody('application/x-www-form-urlencoded', Buffer.from(text)).then(
          ({ body }) => ({ value: body }),
          (err: Error) => ({ error: err.message }),
        );
        // UTF-8 has no lone surrogates: compare only strings that survive the trip through bytes.
        if (Buffer.from(text).toString('utf8') === text) expect(shape(got)).toEqual(shape(expected));
      }),
      { numRuns: 500 },
    );
  });
});

describe('prototype safety', () => {
  // Shared by query and form bodies: hostile input -> expected data.
  const hostileForms: [string, Record<string, unknown>][] = [
    ['__proto__[polluted]=1', {}],
    ['__proto__=1&a=2', { a: '2' }],
    ['constructor[prototype][polluted]=1', {}],
    ['a[__proto__][polluted]=1', { a: {} }],
    ['a[constructor][prototype][polluted]=1&a[b]=2', { a: { b: '2' } }],
    ['__proto__[toString]=x', {}],
    ['constructor=x&prototype[a]=y', { constructor: 'x', prototype: { a: 'y' } }],
  ];

  it.each(hostileForms)('query %j', (raw, expected) => {
    const result = parseQuery(raw);
    expect(result).toEqual(expected);
    expectOrdinary(result);
  });

  it.each(hostileForms)('form body %j', async (raw, expected) => {
    const { body } = await parseBody('application/x-www-form-urlencoded', Buffer.from(raw));
    expect(body).toEqual(expected);
    expectOrdinary(body);
  });

  it('keeps constructor/prototype as own data properties that change no prototype', () => {
    const result = parseQuery('constructor=x&prototype=y');
    expect(Object.getOwnPropertyDescriptor(result, 'constructor')).toMatchObject({
      value: 'x',
      writable: true,
    });
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect({}.constructor).toBe(Object);
  });

  it.each<[string, unknown]>([
    ['{"__proto__":{"polluted":1}}', {}],
    ['{"a":{"__proto__":{"polluted":1}},"b":2}', { a: {}, b: 2 }],
    ['{"constructor":{"prototype":{"polluted":1}}}', {}],
    ['[{"__proto__":{"polluted":1}}]', [{}]],
    ['{"constructor":"x","prototype":{"a":1}}', { constructor: 'x', prototype: { a: 1 } }],
  ])('JSON %s', async (raw, expected) => {
    const { body } = await parseBody('application/json', Buffer.from(raw));
    expect(body).toEqual(expected);
    expectOrdinary(body);
  });

  it.each([
    '<__proto__><polluted>1</polluted></__proto__>',
    '<constructor><prototype>1</prototype></constructor>',
  ])('XML %s is refused', async (raw) => {
    await expectInvalid(parseBody('application/xml', Buffer.from(raw)), /XML.*reserved/);
  });

  it('XML attribute named __proto__ is prefixed data', async () => {
    const { body } = await parseBody('text/xml', Buffer.from('<r __proto__="1" constructor="2"/>'));
    expect(body).toEqual({ r: { '@___proto__': '1', '@_constructor': '2' } });
    expectOrdinary(body);
  });

  it('multipart field names', async () => {
    const raw = multipart([
      { name: '__proto__[polluted]', value: '1' },
      { name: 'constructor[prototype][polluted]', value: '1' },
      { name: 'ok', value: 'yes' },
    ]);
    const { body } = await parseBody(MP, raw);
    expect(body).toEqual({ ok: 'yes' });
    expectOrdinary(body);
  });
});

describe('parseBody: empty bodies', () => {
  it.each([
    undefined,
    '',
    'application/json',
    'application/xml',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data',
    'multipart/form-data; boundary=x',
    'application/pdf',
  ])('%s -> {}', async (contentType) => {
    expect(await parseBody(contentType, Buffer.alloc(0))).toEqual({ body: {}, files: [] });
  });
});

describe('parseBody: application/x-www-form-urlencoded', () => {
  it.each<[string, Buffer, unknown]>([
    ['application/x-www-form-urlencoded', Buffer.from('param1=x&param2=y'), { param1: 'x', param2: 'y' }],
    ['Application/X-WWW-Form-Urlencoded; Charset=UTF-8', Buffer.from('a=1'), { a: '1' }],
    ['application/x-www-form-urlencoded', Buffer.from('a=1&a=2&b[c]=3'), { a: ['1', '2'], b: { c: '3' } }],
    [
      'application/x-www-form-urlencoded',
      Buffer.from('msg=hello+world&x=a%2Bb'),
      { msg: 'hello world', x: 'a+b' },
    ],
    ['application/x-www-form-urlencoded', Buffer.from('n=J%C3%B6rg&raw=Jörg'), { n: 'Jörg', raw: 'Jörg' }],
    ['application/x-www-form-urlencoded; charset=iso-8859-1', Buffer.from('n=J%F6rg'), { n: 'Jörg' }],
    ['application/x-www-form-urlencoded; charset="latin1"', Buffer.from('n=Jörg', 'latin1'), { n: 'Jörg' }],
  ])('%s %#', async (contentType, raw, expected) => {
    expect(await parseBody(contentType, raw)).toEqual({ body: expected, files: [] });
  });

  it.each<[string, string, ParseLimits, RegExp]>([
    ['5000 params', manyParams(5000), DEFAULT_PARSE_LIMITS, /form body.*Parameter limit.*1000/],
    ['too deep', nestedKey(21), DEFAULT_PARSE_LIMITS, /form body.*depth/],
    ['custom maxKeys', 'a=1&b=2', limits({ maxKeys: 1 }), /Parameter limit/],
  ])('rejects %s', async (_name, raw, lim, message) => {
    await expectInvalid(parseBody('application/x-www-form-urlencoded', Buffer.from(raw), lim), message);
  });

  it('rejects an unsupported charset instead of guessing', async () => {
    await expectInvalid(
      parseBody('application/x-www-form-urlencoded; charset=shift_jis', Buffer.from('a=1')),
      /charset "shift_jis" is not supported/,
    );
  });
});

describe('parseBody: JSON', () => {
  it.each<[string, string | Buffer, unknown]>([
    ['application/json', '{"a":1,"b":[true,null,"x"]}', { a: 1, b: [true, null, 'x'] }],
    ['application/json; charset=utf-8', '{"ü":"ö"}', { ü: 'ö' }],
    ['APPLICATION/JSON', '[1,2]', [1, 2]],
    ['application/vnd.api+json', '{"data":{"id":"1"}}', { data: { id: '1' } }],
    ['application/cloudevents+json; charset=UTF-8', '"just a string"', 'just a string'],
    ['application/json', '42', 42],
    ['application/json', 'null', null],
    [
      'application/json',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"bom":1}')]),
      { bom: 1 },
    ],
    ['application/json; charset=utf-16le', Buffer.from('{"a":"é"}', 'utf16le'), { a: 'é' }],
  ])('%s %#', async (contentType, raw, expected) => {
    expect(await parseBody(contentType, Buffer.from(raw))).toEqual({ body: expected, files: [] });
  });

  it.each(['{"a":1,}', '{', '{"a":}', 'not json', "{'a':1}", '   ', '{"a":1} trailing'])(
    'malformed %j -> invalid_body saying what and where',
    async (raw) => {
      await expectInvalid(
        parseBody('application/json', Buffer.from(raw)),
        /^The body is not valid JSON: .*(position|end|token)/,
      );
    },
  );

  it.each<[string, string, ParseLimits, boolean]>([
    // Depth counts nesting below the top-level value, like `[...]` groups in a form key.
    ['21 nested objects (depth 20)', nestedJson(21), DEFAULT_PARSE_LIMITS, true],
    ['22 nested objects (depth 21)', nestedJson(22), DEFAULT_PARSE_LIMITS, false],
    ['21 nested arrays', `${'['.repeat(21)}${']'.repeat(21)}`, DEFAULT_PARSE_LIMITS, true],
    ['22 nested arrays', `${'['.repeat(22)}${']'.repeat(22)}`, DEFAULT_PARSE_LIMITS, false],
    ['100 000 levels', `${'['.repeat(100_000)}${']'.repeat(100_000)}`, DEFAULT_PARSE_LIMITS, false],
    ['3 nested objects, maxDepth 2', nestedJson(3), limits({ maxDepth: 2 }), true],
    ['4 nested objects, maxDepth 2', nestedJson(4), limits({ maxDepth: 2 }), false],
  ])('depth: %s', async (_name, raw, lim, ok) => {
    const result = parseBody('application/json', Buffer.from(raw), lim);
    if (ok) await expect(result).resolves.toBeDefined();
    else await expectInvalid(result, /nested more than \d+ levels deep/);
  });

  it('a wide JSON body is not limited by maxKeys', async () => {
    const wide = JSON.stringify(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])));
    const { body } = await parseBody('application/json', Buffer.from(wide));
    expect(Object.keys(body as object)).toHaveLength(5000);
  });
});

describe('parseBody: XML', () => {
  it.each<[string, string, unknown]>([
    ['application/xml', '<order id="7"><item>x</item></order>', { order: { '@_id': '7', item: 'x' } }],
    [
      'text/xml; charset=utf-8',
      '<?xml version="1.0"?><a><n>007</n><n>1.5</n></a>',
      { a: { n: ['007', '1.5'] } },
    ],
    ['application/atom+xml', '<feed><title>T</title></feed>', { feed: { title: 'T' } }],
    ['Application/XML', '<a b="true">text</a>', { a: { '@_b': 'true', '#text': 'text' } }],
    ['application/xml', '<a>Tom &amp; Jerry &lt;3 &#233;&#x41;</a>', { a: 'Tom & Jerry <3 éA' }],
    ['application/xml', '<!DOCTYPE a [<!ENTITY e "EXP">]><a>&e;</a>', { a: 'EXP' }],
    ['application/xml', '<a><toString>1</toString></a>', { a: { __toString: '1' } }],
  ])('%s %#', async (contentType, raw, expected) => {
    const { body, files } = await parseBody(contentType, Buffer.from(raw));
    expect(body).toEqual(expected);
    expect(files).toEqual([]);
    expectOrdinary(body);
  });

  it('accepts 20 nested elements with attributes (depth 20)', async () => {
    const raw = `${'<a x="1">'.repeat(20)}${'</a>'.repeat(20)}`;
    await expect(parseBody('application/xml', Buffer.from(raw))).resolves.toBeDefined();
  });

  it('honours the charset', async () => {
    const raw = Buffer.from('<a>Jörg</a>', 'latin1');
    expect((await parseBody('application/xml; charset=iso-8859-1', raw)).body).toEqual({ a: 'Jörg' });
  });

  it.each([
    ['mismatched tags', '<a><b></a>', /not well-formed XML: .*\(line 1, column \d+\)/],
    ['not XML', 'hello', /not well-formed XML/],
    ['unclosed', '<a>', /not well-formed XML/],
    [
      'external entity',
      '<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>',
      /XML.*External entities/,
    ],
    ['oversized entity', `<!DOCTYPE a [<!ENTITY e "${'x'.repeat(5000)}">]><a>&e;</a>`, /XML.*size/],
    ['expansion bomb', `<!DOCTYPE a [<!ENTITY e "${'x'.repeat(900)}">]><a>${'&e;'.repeat(2000)}</a>`, /XML/],
    ['deep nesting', `${'<a>'.repeat(10_000)}${'</a>'.repeat(10_000)}`, /nested|XML/],
    ['21 levels', `${'<a x="1">'.repeat(22)}${'</a>'.repeat(22)}`, /nested|XML/],
  ])('rejects %s', async (_name, raw, message) => {
    await expectInvalid(parseBody('application/xml', Buffer.from(raw)), message);
  });

  it('does not expand nested "billion laughs" entities', async () => {
    let doc = '<!DOCTYPE lolz [<!ENTITY lol "lol">';
    for (let i = 1; i < 10; i++) doc += `<!ENTITY lol${i} "${`&lol${i === 1 ? '' : i - 1};`.repeat(10)}">`;
    doc += ']><lolz>&lol9;</lolz>';
    const result = await parseBody('application/xml', Buffer.from(doc)).catch((e: unknown) => e);
    if (result instanceof AppError) expect(result.code).toBe('invalid_body');
    else expect(JSON.stringify(result).length).toBeLessThan(1_000);
  });
});

describe('parseBody: text/*', () => {
  it.each<[string, Buffer, string]>([
    ['text/plain', Buffer.from('hello ü'), 'hello ü'],
    ['text/csv; charset=utf-8', Buffer.from('a,b\n1,2\n'), 'a,b\n1,2\n'],
    ['TEXT/HTML', Buffer.from('<p>hi</p>'), '<p>hi</p>'],
    ['text/plain; charset=iso-8859-1', Buffer.from([0x4a, 0xf6, 0x72, 0x67]), 'Jörg'],
    ['text/plain; charset=utf-16le', Buffer.from('Jörg', 'utf16le'), 'Jörg'],
    ['text/plain', Buffer.from([0x61, 0xff, 0x62]), 'a\ufffdb'],
  ])('%s %#', async (contentType, raw, expected) => {
    expect(await parseBody(contentType, raw)).toEqual({ body: expected, files: [] });
  });

  it('rejects an unknown charset', async () => {
    await expectInvalid(parseBody('text/plain; charset=klingon', Buffer.from('x')), /charset "klingon"/);
  });
});

describe('parseBody: multipart/form-data', () => {
  const pdf = Buffer.from('%PDF-1.7 binary \u0000\u00ff', 'latin1');

  it('puts fields in body and files in files', async () => {
    const raw = multipart([
      { name: 'title', value: 'Hello ü' },
      { name: 'tag', value: 'a' },
      { name: 'tag', value: 'b' },
      { name: 'user[name]', value: 'Ann' },
      { name: 'user[roles][]', value: 'admin' },
      { name: 'doc', filename: 'report.pdf', type: 'application/pdf', data: pdf },
      { name: 'doc', filename: 'notes.txt', type: 'text/plain', data: Buffer.from('notes') },
    ]);
    const { body, files } = await parseBody(MP, raw);
    expect(body).toEqual({ title: 'Hello ü', tag: ['a', 'b'], user: { name: 'Ann', roles: ['admin'] } });
    expectOrdinary(body);
    expect(files).toEqual([
      {
        field: 'doc',
        filename: 'report.pdf',
        mimeType: 'application/pdf',
        size: pdf.length,
        sha256: sha256(pdf),
        data: pdf,
      },
      {
        field: 'doc',
        filename: 'notes.txt',
        mimeType: 'text/plain',
        size: 5,
        sha256: sha256(Buffer.from('notes')),
        data: Buffer.from('notes'),
      },
    ]);
  });

  it.each<[string, string, string]>([
    ['case-insensitive type', 'Multipart/Form-Data; boundary=XyZzy42', 'XyZzy42'],
    ['quoted boundary', 'multipart/form-data; boundary="a b:c"', 'a b:c'],
  ])('%s', async (_name, contentType, boundary) => {
    const raw = multipart([{ name: 'a', value: '1' }], boundary);
    expect(await parseBody(contentType, raw)).toEqual({ body: { a: '1' }, files: [] });
  });

  it('keeps long field names and values whole', async () => {
    const name = 'n'.repeat(500);
    const value = 'v'.repeat(2_000_000);
    const { body } = await parseBody(MP, multipart([{ name, value }]));
    expect((body as Record<string, string>)[name]).toHaveLength(2_000_000);
  });

  it('an empty file is still a file', async () => {
    const { files } = await parseBody(
      MP,
      multipart([{ name: 'f', filename: 'e.bin', data: Buffer.alloc(0) }]),
    );
    expect(files).toMatchObject([
      { field: 'f', filename: 'e.bin', size: 0, sha256: sha256(Buffer.alloc(0)) },
    ]);
  });

  const good = multipart([
    { name: 'a', value: '1' },
    { name: 'f', filename: 'x.bin', type: 'application/octet-stream', data: Buffer.alloc(1000, 7) },
  ]);
  it.each<[string, string, Buffer, ParseLimits, RegExp]>([
    ['missing boundary', 'multipart/form-data', good, DEFAULT_PARSE_LIMITS, /Boundary not found/],
    ['wrong boundary', 'multipart/form-data; boundary=other', good, DEFAULT_PARSE_LIMITS, /malformed/],
    [
      'truncated in a file',
      MP,
      good.subarray(0, good.length - 500),
      DEFAULT_PARSE_LIMITS,
      /malformed.*Unexpected end/,
    ],
    ['truncated in a field', MP, good.subarray(0, 60), DEFAULT_PARSE_LIMITS, /malformed.*Unexpected end/],
    ['missing final boundary', MP, good.subarray(0, good.length - 13), DEFAULT_PARSE_LIMITS, /malformed/],
    ['garbage', MP, Buffer.from('this is not multipart'), DEFAULT_PARSE_LIMITS, /malformed/],
    [
      'bad part header',
      MP,
      Buffer.from('--XyZzy42\r\nno-colon-header\r\n\r\nx\r\n--XyZzy42--\r\n'),
      DEFAULT_PARSE_LIMITS,
      /malformed/,
    ],
    [
      'too many files',
      MP,
      multipart(Array.from({ length: 3 }, (_, i) => ({ name: 'f', filename: `${i}.txt`, value: 'x' }))),
      limits({ maxFiles: 2 }),
      /more than 2 files/,
    ],
    [
      'too many fields',
      MP,
      multipart(Array.from({ length: 5000 }, (_, i) => ({ name: `k${i}`, value: 'v' }))),
      DEFAULT_PARSE_LIMITS,
      /more than 1000 fields/,
    ],
    ['too deep', MP, multipart([{ name: 'a[b][c]', value: '1' }]), limits({ maxDepth: 1 }), /depth/],
  ])('rejects %s', async (_name, contentType, raw, lim, message) => {
    await expectInvalid(parseBody(contentType, raw, lim), message);
  });
});

describe('parseBody: other content types are kept as a raw file', () => {
  const bytes = Buffer.from([0, 1, 2, 250, 255]);
  it.each<[string | undefined, string]>([
    ['application/pdf', 'application/pdf'],
    ['Image/PNG', 'image/png'],
    ['application/octet-stream; foo=bar', 'application/octet-stream'],
    ['multipart/mixed; boundary=x', 'multipart/mixed'],
    [undefined, 'application/octet-stream'],
    ['', 'application/octet-stream'],
    ['  ; charset=utf-8', 'application/octet-stream'],
    ['not a mime type', 'application/octet-stream'],
  ])('%j -> %s', async (contentType, mimeType) => {
    expect(await parseBody(contentType, bytes)).toEqual({
      body: {},
      files: [{ field: 'body', filename: 'body', mimeType, size: 5, sha256: sha256(bytes), data: bytes }],
    });
  });
});

describe('hostile input never escapes as anything but invalid_body', () => {
  // Deterministic pseudo-random bytes (xorshift) so a failure is reproducible.
  let seed = 0x2545f491;
  const randomBytes = (n: number) => {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      out[i] = seed & 0xff;
    }
    return out;
  };
  const alphabet = Buffer.from('[]{}<>="&%+;:,/\\!?-_.aZ09 \r\n__proto__constructor--XyZzy42');
  const structured = (n: number) => Buffer.from(randomBytes(n).map((b) => alphabet[b % alphabet.length]!));

  it.each([
    'application/json',
    'application/x-www-form-urlencoded',
    'application/xml',
    'text/plain; charset=utf-16be',
    MP,
    'multipart/form-data; boundary=',
    'application/x-whatever',
  ])('%s', async (contentType) => {
    for (let i = 0; i < 200; i++) {
      const raw = i % 2 === 0 ? randomBytes(1 + (i % 300)) : structured(1 + (i % 300));
      const outcome = await parseBody(contentType, raw).catch((e: unknown) => e);
      if (outcome instanceof Error) {
        expect(outcome).toBeInstanceOf(AppError);
        expect((outcome as AppError).code).toBe('invalid_body');
      } else {
        expectOrdinary((outcome as { body: unknown }).body);
      }
    }
  });
});

describe('bounded cost: nested and oversized bodies of every content type (issue 14)', () => {
  /** The outcome of parseBody: the body, or the invalid_body message; anything else fails the test. */
  async function outcomeOf(contentType: string, raw: Buffer, lim: ParseLimits) {
    try {
      return { value: (await parseBody(contentType, raw, lim)).body };
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      const appErr = err as AppError;
      expect(appErr.code).toBe('invalid_body');
      // The whole wire body, not just the message, stays far under 4 KB.
      expect(JSON.stringify(appErr.toJSON()).length).toBeLessThan(4096);
      return { error: appErr.message };
    }
  }

  // Strings full of the characters the scans look at, so skipping string content is exercised.
  const trickyString = fc.string({
    unit: fc.constantFrom('[', ']', '{', '}', ',', '"', '\\', "'", '<', '>', '/', '=', 'a', ' ', '\u00e9'),
    maxLength: 8,
  });

  describe('JSON', () => {
    const jsonArb = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.oneof(trickyString, fc.integer(), fc.constantFrom(true, false, null), fc.double({ noNaN: true })),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(trickyString, tie('value'), { maxKeys: 4 }),
      ),
    })).value;

    /** Depth below the top-level value, containers, and values as the scan counts them. */
    function measure(value: unknown, depth = 0): { depth: number; containers: number; commas: number } {
      if (value === null || typeof value !== 'object') return { depth: -1, containers: 0, commas: 0 };
      const items = Object.values(value);
      const total = { depth, containers: 1, commas: Math.max(items.length - 1, 0) };
      for (const item of items) {
        const inner = measure(item, depth + 1);
        total.depth = Math.max(total.depth, inner.depth);
        total.containers += inner.containers;
        total.commas += inner.commas;
      }
      return total;
    }

    it('parses exactly as JSON.parse within the limits, and refuses cleanly past any of them', async () => {
      let accepted = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(
          jsonArb,
          fc.integer({ min: 0, max: 4 }),
          fc.integer({ min: 1, max: 12 }),
          fc.integer({ min: 1, max: 30 }),
          fc.constantFrom('', ' ', '\n\t'),
          async (value, maxDepth, maxJsonContainers, maxJsonValues, space) => {
            // Some JSON has a `constructor` holding a `prototype` key; not generated here (own tests above).
            const text = JSON.stringify(value, null, space);
            const m = measure(value);
            const over =
              m.depth > maxDepth ||
              m.containers > maxJsonContainers ||
              1 + m.containers + m.commas > maxJsonValues;
            const lim = limits({ maxDepth, maxJsonContainers, maxJsonValues });
            const got = await outcomeOf('application/json', Buffer.from(text), lim);
            if (over) {
              refused++;
              expect(got.error).toMatch(/nested more than \d+ levels deep|more than \d+ objects and arrays/);
              expect(got.error).toMatch(/\(at character \d+\)\.$/);
            } else {
              accepted++;
              expect(got.error).toBeUndefined();
              expect(shape(got.value)).toEqual(shape(JSON.parse(text)));
            }
          },
        ),
        { numRuns: 1500 },
      );
      expect(accepted).toBeGreaterThan(200);
      expect(refused).toBeGreaterThan(200);
    });

    it('accepts nesting at the limit and refuses one level more, wherever strings hide brackets', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 45 }),
          fc.array(fc.boolean(), { minLength: 45, maxLength: 45 }),
          trickyString,
          async (levels, objects, filler) => {
            // `levels` containers around a string: depth levels - 1 below the top-level value.
            let text = JSON.stringify(filler);
            for (let i = 0; i < levels; i++) {
              text = objects[i]
                ? `{${JSON.stringify(filler)}:${text}}`
                : `[${JSON.stringify(filler)},${text}]`;
            }
            const got = await outcomeOf('application/json', Buffer.from(text), DEFAULT_PARSE_LIMITS);
            if (levels - 1 > DEFAULT_PARSE_LIMITS.maxDepth)
              expect(got.error).toMatch(/nested more than 20 levels/);
            else expect(shape(got.value)).toEqual(shape(JSON.parse(text)));
          },
        ),
        { numRuns: 300 },
      );
    });

    it('refuses an 8-million-deep array at the first bracket past the limit, with a short message', async () => {
      const raw = Buffer.from(`${'['.repeat(8_000_000)}${']'.repeat(8_000_000)}`);
      const err = await expectInvalid(parseBody('application/json', raw), /nested more than 20 levels deep/);
      expect(err.message).toBe('The body is nested more than 20 levels deep (at character 21).');
    });

    it('refuses 5 million empty objects by count, and accepts 2 million scalars', async () => {
      await expectInvalid(
        parseBody('application/json', Buffer.from(`[${'{},'.repeat(5_000_000)}{}]`)),
        /more than 500000 objects and arrays or 2000000 values \(at character \d+\)/,
      );
      const { body } = await parseBody('application/json', Buffer.from(`[${'0,'.repeat(1_999_998)}0]`));
      expect(body).toHaveLength(1_999_999);
    });
  });

  describe('XML', () => {
    interface El {
      name: string;
      attrs: string[];
      children: (El | string)[];
    }
    const names = fc.constantFrom('a', 'b', 'item', 'x-y', 'n1');
    // Comments, CDATA and processing instructions whose text looks like tags must count for nothing.
    const fakeTags = fc.constantFrom(
      '<!-- <a><a><a> -->',
      '<![CDATA[<a><b><c x="1">]]>',
      '<?pi <a><a> ?>',
      'text &amp; more',
      ' ',
    );
    const elArb: fc.Arbitrary<El> = fc.letrec<{ el: El }>((tie) => ({
      el: fc.record({
        name: names,
        attrs: fc.uniqueArray(fc.constantFrom('id', 'k', 'z'), { maxLength: 3 }),
        children: fc.array(fc.oneof({ depthSize: 'small' }, fakeTags, tie('el')), { maxLength: 3 }),
      }),
    })).el;
    const attrValue = fc.constantFrom('1', '<a>', 'a/b', "it's", '>');
    function serialize(el: El, value: string): string {
      const attrs = el.attrs.map((a) => ` ${a}="${value.replaceAll('<', '&lt;')}"`).join('');
      if (el.children.length === 0) return `<${el.name}${attrs}/>`;
      const inner = el.children.map((c) => (typeof c === 'string' ? c : serialize(c, value))).join('');
      return `<${el.name}${attrs}>${inner}</${el.name}>`;
    }
    /**
     * Depth as the parsed body has it ({root: value} with the root's value at depth 1): an element is
     * an object when it has attributes or child elements (a string otherwise), and repeated child
     * elements become an array one level below their parent, each a level below the array.
     */
    function measure(el: El, depth = 1): { depth: number; nodes: number } {
      const elements = el.children.filter((c): c is El => typeof c !== 'string');
      const total = {
        depth: el.attrs.length > 0 || elements.length > 0 ? depth : 0,
        nodes: 1 + el.attrs.length,
      };
      for (const child of elements) {
        const repeated = elements.filter((c) => c.name === child.name).length > 1;
        if (repeated) total.depth = Math.max(total.depth, depth + 1);
        const inner = measure(child, repeated ? depth + 2 : depth + 1);
        total.depth = Math.max(total.depth, inner.depth);
        total.nodes += inner.nodes;
      }
      return total;
    }
    const generous = limits({ maxDepth: 1000, maxXmlNodes: 1_000_000 });

    it('parses as without the limits within them, and refuses cleanly past them', async () => {
      let accepted = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(
          elArb,
          attrValue,
          fc.integer({ min: 0, max: 4 }),
          fc.integer({ min: 1, max: 20 }),
          fc.constantFrom('', '<?xml version="1.0"?>', '<!DOCTYPE r [<!ENTITY e "x">]>'),
          async (el, value, maxDepth, maxXmlNodes, prolog) => {
            const raw = Buffer.from(`${prolog}${serialize(el, value)}`);
            const m = measure(el);
            const got = await outcomeOf('application/xml', raw, limits({ maxDepth, maxXmlNodes }));
            const unlimited = await outcomeOf('application/xml', raw, generous);
            if (m.depth > maxDepth || m.nodes > maxXmlNodes) {
              refused++;
              expect(got.error).toMatch(
                /nested more than \d+ levels deep|more than \d+ elements and attributes/,
              );
            } else {
              accepted++;
              expect(shape(got)).toEqual(shape(unlimited));
            }
          },
        ),
        { numRuns: 1000 },
      );
      expect(accepted).toBeGreaterThan(100);
      expect(refused).toBeGreaterThan(100);
    });

    it('refuses 16 MB of unclosed tags at the 22nd, with a short message', async () => {
      const raw = Buffer.from('<a>'.repeat(5_333_333));
      const err = await expectInvalid(parseBody('application/xml', raw), /nested more than 20 levels deep/);
      expect(err.message).toBe('The XML body is nested more than 20 levels deep (at character 63).');
    });

    it('quotes at most a short excerpt of the validator', async () => {
      // 20 open tags, within the depth limit, never closed: the validator lists them all.
      const raw = Buffer.from(`${'<abcdefghijklmnopqrstuvwxyz0123456789>'.repeat(20)}`);
      const err = await expectInvalid(parseBody('application/xml', raw), /not well-formed XML/);
      expect(err.message.length).toBeLessThan(300);
    });
  });

  describe('forms', () => {
    it('refuses past maxDepth brackets and maxKeys parameters, and parses like qs within them', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 8 }),
          fc.integer({ min: 1, max: 8 }),
          fc.integer({ min: 1, max: 6 }), // qs reads maxDepth 0 as "no nesting at all", not as a limit
          fc.integer({ min: 1, max: 6 }),
          async (levels, keys, maxDepth, maxKeys) => {
            const text = Array.from({ length: keys }, (_, i) => `k${i}${'[b]'.repeat(levels)}=v`).join('&');
            const lim = limits({ maxDepth, maxKeys });
            const got = await outcomeOf('application/x-www-form-urlencoded', Buffer.from(text), lim);
            if (levels > maxDepth || keys > maxKeys)
              expect(got.error).toMatch(/form body exceeds a parsing limit/);
            else
              expect(shape(got.value)).toEqual(shape(parseUrlEncodedWithQs(text, 'utf-8', lim, 'form body')));
          },
        ),
        { numRuns: 300 },
      );
    });

    it.each([
      ['a key with 5 million brackets', `a${'[b]'.repeat(5_000_000)}=1`, /depth/],
      ['8 million keys', 'a&'.repeat(8_000_000), /Parameter limit/],
      ['8 million encoded brackets', `a${'%5Bb%5D'.repeat(2_000_000)}=1`, /depth/],
    ])('refuses %s with a short message', async (_name, text, message) => {
      const err = await expectInvalid(
        parseBody('application/x-www-form-urlencoded', Buffer.from(text)),
        message,
      );
      expect(err.message.length).toBeLessThan(300);
    });
  });

  describe('text', () => {
    it('is kept as the decoded string whatever it holds, brackets and tags included', async () => {
      await fc.assert(
        fc.asyncProperty(fc.string({ minLength: 1, maxLength: 200 }), async (text) => {
          if (Buffer.from(text).toString('utf8') !== text) return; // lone surrogates do not survive UTF-8
          expect(await outcomeOf('text/plain', Buffer.from(text), DEFAULT_PARSE_LIMITS)).toEqual({
            value: text,
          });
        }),
      );
      const big = '<a>['.repeat(4_000_000);
      expect((await parseBody('text/plain', Buffer.from(big))).body).toBe(big);
    });
  });

  describe('multipart', () => {
    const unnamed = (n: number) =>
      Buffer.from(`${'--XyZzy42\r\nContent-Type: text/plain\r\n\r\nx\r\n'.repeat(n)}--XyZzy42--\r\n`);

    it('counts every part, named or not, against maxKeys + maxFiles', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom('field', 'file', 'unnamed', 'deep'), { maxLength: 12 }),
          fc.integer({ min: 1, max: 5 }),
          fc.integer({ min: 1, max: 3 }),
          async (kinds, maxKeys, maxFiles) => {
            const parts = kinds.map((kind, i): Part => {
              if (kind === 'file') return { name: `f${i}`, filename: `${i}.txt`, value: 'x' };
              if (kind === 'deep') return { name: `d${i}${'[b]'.repeat(3)}`, value: 'x' };
              return { name: kind === 'unnamed' ? '' : `k${i}`, value: 'x' };
            });
            const raw = Buffer.from(
              multipart(parts)
                .toString('latin1')
                .replaceAll('Content-Disposition: form-data; name=""', 'Content-Type: text/plain'),
              'latin1',
            );
            const lim = limits({ maxKeys, maxFiles, maxDepth: 2 });
            const got = await outcomeOf(MP, raw, lim);
            const count = (k: string) => kinds.filter((kind) => kind === k).length;
            const over =
              kinds.length > maxKeys + maxFiles ||
              count('field') + count('deep') > maxKeys ||
              count('file') > maxFiles ||
              count('deep') > 0;
            if (over) expect(got.error).toMatch(/more than \d+ (parts|fields|files)|depth/);
            else expect(got.error).toBeUndefined();
          },
        ),
        { numRuns: 300 },
      );
    });

    it('stops at the part limit instead of reading 300 000 unnamed parts', async () => {
      await expectInvalid(parseBody(MP, unnamed(300_000)), /more than 1020 parts/);
      await expect(parseBody(MP, unnamed(1020))).resolves.toEqual({ body: {}, files: [] });
    });
  });
});
