import fc from 'fast-check';
import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { flattenValue, joinExpression, keyStep, requestFields } from '../../web/src/lib/flatten.js';

describe('keyStep', () => {
  it('keeps plain identifiers bare', () => {
    for (const key of ['param1', '_id', 'A', 'camelCase', 'snake_case_2', 'Function', 'nullable']) {
      expect(keyStep(key)).toBe(key);
    }
  });

  it('backticks JSONata words that cannot be bare steps', () => {
    for (const key of ['and', 'or', 'in', 'true', 'false', 'null', 'function']) {
      expect(keyStep(key)).toBe(`\`${key}\``);
    }
  });

  it('backticks keys that are not identifiers', () => {
    expect(keyStep('content-type')).toBe('`content-type`');
    expect(keyStep('a b')).toBe('`a b`');
    expect(keyStep('1st')).toBe('`1st`');
    expect(keyStep('$var')).toBe('`$var`');
    expect(keyStep('a.b')).toBe('`a.b`');
    expect(keyStep('')).toBe('``');
    expect(keyStep('é')).toBe('`é`');
  });

  it('falls back to $lookup for a key holding a backtick', () => {
    expect(keyStep('a`b')).toBe('$lookup($, "a`b")');
    expect(keyStep('"`\\')).toBe('$lookup($, "\\"`\\\\")');
  });
});

describe('joinExpression', () => {
  it('starts a path from an empty base', () => {
    expect(joinExpression('', 'body')).toBe('body');
    expect(joinExpression('', 'content-type')).toBe('`content-type`');
  });

  it('appends a step with a dot', () => {
    expect(joinExpression('headers', 'content-type')).toBe('headers.`content-type`');
    expect(joinExpression('body.items[0]', 'name')).toBe('body.items[0].name');
  });

  it('wraps the base in $lookup for a key holding a backtick', () => {
    expect(joinExpression('', 'a`b')).toBe('$lookup($, "a`b")');
    expect(joinExpression('body.x', 'a`b')).toBe('$lookup(body.x, "a`b")');
  });
});

describe('flattenValue', () => {
  it('lists objects and lists before what they hold when asked (the field picker)', () => {
    const value = { body: { lines: [{ sku: 'A' }], customer: { id: 1 } } };
    expect(flattenValue(value, 500, { containers: true }).map((r) => [r.path, r.expression])).toEqual([
      ['body', 'body'],
      ['body.lines', 'body.lines'],
      ['body.lines[0]', 'body.lines[0]'],
      ['body.lines[0].sku', 'body.lines[0].sku'],
      ['body.customer', 'body.customer'],
      ['body.customer.id', 'body.customer.id'],
    ]);
    // The request table: leaves only.
    expect(flattenValue(value).map((r) => r.path)).toEqual(['body.lines[0].sku', 'body.customer.id']);
  });
  it('lists the leaves of nested objects and arrays with display paths and expressions', () => {
    const value = {
      body: { param1: 'a', items: [{ name: 'x' }, { name: 'y', tags: ['t'] }] },
      headers: { 'content-type': 'application/json' },
    };
    expect(flattenValue(value)).toEqual([
      { path: 'body.param1', expression: 'body.param1', value: 'a' },
      { path: 'body.items[0].name', expression: 'body.items[0].name', value: 'x' },
      { path: 'body.items[1].name', expression: 'body.items[1].name', value: 'y' },
      { path: 'body.items[1].tags[0]', expression: 'body.items[1].tags[0]', value: 't' },
      { path: 'headers.content-type', expression: 'headers.`content-type`', value: 'application/json' },
    ]);
  });

  it('shows a primitive (or null) at the top as $', () => {
    expect(flattenValue(42)).toEqual([{ path: '$', expression: '$', value: 42 }]);
    expect(flattenValue(null)).toEqual([{ path: '$', expression: '$', value: null }]);
    expect(flattenValue('text')).toEqual([{ path: '$', expression: '$', value: 'text' }]);
  });

  it('gives no rows for an empty object or array at the top', () => {
    expect(flattenValue({})).toEqual([]);
    expect(flattenValue([])).toEqual([]);
  });

  it('lists empty objects and arrays below the top as leaves', () => {
    expect(flattenValue({ a: {}, b: [], c: { d: [] } })).toEqual([
      { path: 'a', expression: 'a', value: {} },
      { path: 'b', expression: 'b', value: [] },
      { path: 'c.d', expression: 'c.d', value: [] },
    ]);
  });

  it('lists the key "" like any other, labelled with its JSONata name ``', () => {
    expect(flattenValue({ '': [] })).toEqual([{ path: '``', expression: '``', value: [] }]);
    expect(flattenValue({ '': 5 })).toEqual([{ path: '``', expression: '``', value: 5 }]);
    expect(flattenValue({ '': {} })).toEqual([{ path: '``', expression: '``', value: {} }]);
    expect(flattenValue({ a: { '': 1 }, '': { '': [2] } })).toEqual([
      { path: 'a.``', expression: 'a.``', value: 1 },
      { path: '``.``[0]', expression: '``.``[0]', value: 2 },
    ]);
    expect(flattenValue([{ '': 'x' }])).toEqual([{ path: '[0].``', expression: '$[0].``', value: 'x' }]);
  });

  it('labels the key "$" with its JSONata name, not as the whole item', () => {
    expect(flattenValue({ $: 1, a: { $: [] } })).toEqual([
      { path: '`$`', expression: '`$`', value: 1 },
      { path: 'a.`$`', expression: 'a.`$`', value: [] },
    ]);
  });

  it('indexes a top-level array from $', () => {
    expect(flattenValue([1, [2, 3]])).toEqual([
      { path: '[0]', expression: '$[0]', value: 1 },
      { path: '[1][0]', expression: '$[1][0]', value: 2 },
      { path: '[1][1]', expression: '$[1][1]', value: 3 },
    ]);
  });

  it('reaches keys with backticks through $lookup', () => {
    expect(flattenValue({ 'a`b': { c: 1 }, x: { 'y`z': 2 } })).toEqual([
      { path: 'a`b.c', expression: '$lookup($, "a`b").c', value: 1 },
      { path: 'x.y`z', expression: '$lookup(x, "y`z")', value: 2 },
    ]);
  });

  it('stops at maxRows', () => {
    const value = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i]));
    expect(flattenValue(value, 3).map((r) => r.path)).toEqual(['k0', 'k1', 'k2']);
    expect(flattenValue(value, 0)).toEqual([]);
    const big = Array.from({ length: 600 }, (_, i) => i);
    expect(flattenValue(big)).toHaveLength(500);
  });

  it('stops descending at 20 levels and shows the rest as one value', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 25; i++) deep = { n: deep };
    const rows = flattenValue(deep);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.path).toBe(Array(20).fill('n').join('.'));
    let rest: unknown = 'bottom';
    for (let i = 0; i < 5; i++) rest = { n: rest };
    expect(rows[0]!.value).toEqual(rest);
  });

  // Keys that need every kind of step: bare, reserved, backticked, $lookup.
  const keyArb = fc.oneof(
    fc.constantFrom('a', 'b_1', 'and', 'null', 'content-type', 'a b', 'x`y', '$', '1', 'é', '"q"'),
    fc.string({ maxLength: 4 }),
  );
  const jsonArb = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.boolean(), fc.constant(null)),
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(keyArb, tie('value'), { maxKeys: 3 }),
    ),
  })).value;

  it('gives expressions that JSONata evaluates to the listed value', async () => {
    await fc.assert(
      fc.asyncProperty(jsonArb, async (value) => {
        for (const row of flattenValue(value)) {
          const result = await jsonata(row.expression).evaluate(value);
          expect(JSON.parse(JSON.stringify(result ?? null))).toEqual(row.value);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('lists exactly the leaves, each once', () => {
    const leaves = (v: unknown, top: boolean): number => {
      if (v === null || typeof v !== 'object') return 1;
      const children = Object.values(v);
      if (children.length === 0) return top ? 0 : 1;
      return children.reduce((n: number, c) => n + leaves(c, false), 0);
    };
    fc.assert(
      fc.property(jsonArb, (value) => {
        const rows = flattenValue(value);
        expect(rows).toHaveLength(leaves(value, true));
        expect(new Set(rows.map((r) => r.expression)).size).toBe(rows.length);
      }),
    );
  });

  it('labels only a primitive at the top as $', () => {
    fc.assert(
      fc.property(jsonArb, (value) => {
        const top = value === null || typeof value !== 'object';
        for (const row of flattenValue(value)) expect(row.path === '$').toBe(top);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('requestFields', () => {
  it('lists body, query, params and headers in that order, then files', () => {
    const item = {
      headers: { h: '1' },
      files: [{ name: 'f' }],
      params: { id: '7' },
      query: { q: 'x' },
      body: { a: 1 },
      method: 'POST',
      path: 'orders/7',
    };
    const fields = requestFields(item);
    expect(Object.keys(fields)).toEqual(['body', 'query', 'params', 'headers', 'files']);
    expect(fields).toEqual({
      body: { a: 1 },
      query: { q: 'x' },
      params: { id: '7' },
      headers: { h: '1' },
      files: [{ name: 'f' }],
    });
  });

  it('leaves out missing and empty parts', () => {
    expect(requestFields({})).toEqual({});
    expect(requestFields({ body: {}, query: {}, params: {}, headers: {}, files: [] })).toEqual({});
    expect(requestFields({ body: [], query: { a: '1' } })).toEqual({ query: { a: '1' } });
  });

  it('keeps bodies that are not empty objects, even falsy ones', () => {
    expect(requestFields({ body: '' })).toEqual({ body: '' });
    expect(requestFields({ body: null })).toEqual({ body: null });
    expect(requestFields({ body: 0 })).toEqual({ body: 0 });
    expect(requestFields({ body: [1] })).toEqual({ body: [1] });
  });

  it('ignores files that are not a non-empty array', () => {
    expect(requestFields({ files: 'nope' as unknown as unknown[] })).toEqual({});
  });
});
