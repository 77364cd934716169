import { describe, expect, it } from 'vitest';
import { diffAgainstSchema } from '../../src/webhooks/schema/diff.js';
import { flattenFields } from '../../src/webhooks/schema/fields.js';
import { inferSchema, learn, mergeSchemas } from '../../src/webhooks/schema/infer.js';
import {
  type JsonSchema,
  type LearnedSchema,
  SCHEMA_DIALECT,
  SCHEMA_LIMITS,
} from '../../src/webhooks/schema/json-schema.js';

/** Feeds samples through learn() in order, as consecutive test captures would. */
function learnAll(samples: unknown[]): LearnedSchema {
  let learned: LearnedSchema | undefined;
  for (const sample of samples) learned = learn(learned, sample);
  if (learned === undefined) throw new Error('learnAll needs at least one sample');
  return learned;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

function schemaDepth(schema: JsonSchema): number {
  const props = schema.properties ? Object.values(schema.properties) : [];
  const children = [...props, ...(schema.items ? [schema.items] : [])];
  return 1 + Math.max(0, ...children.map(schemaDepth));
}

const triggerItem = {
  method: 'POST',
  path: 'orders/42',
  params: { id: '42' },
  query: { a: '1' },
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: { param1: 'x', param2: 'y' },
  files: [],
  webhookUrl: 'http://localhost:5678/webhook-test/orders/42',
  executionMode: 'test',
  receivedAt: '2026-11-21T20:00:00.000Z',
};

describe('inferSchema', () => {
  it.each<[string, unknown, JsonSchema]>([
    ['string', 'x', { type: 'string', examples: ['x'] }],
    ['integer', 42, { type: 'integer', examples: [42] }],
    ['negative zero is an integer', -0, { type: 'integer', examples: [-0] }],
    ['float', 1.5, { type: 'number', examples: [1.5] }],
    ['boolean', false, { type: 'boolean', examples: [false] }],
    ['null', null, { type: 'null', examples: [null] }],
    ['NaN serialises as null', Number.NaN, { type: 'null', examples: [null] }],
    [
      'Date serialises as a string',
      new Date('2026-01-02T03:04:05.000Z'),
      { type: 'string', examples: ['2026-01-02T03:04:05.000Z'] },
    ],
    ['undefined has no schema', undefined, {}],
    ['empty array', [], { type: 'array', examples: [[]] }],
    ['empty object', {}, { type: 'object', properties: {} }],
    [
      'array of scalars merges element types',
      [1, 2.5, 'three'],
      {
        type: 'array',
        items: { type: ['number', 'string'], examples: ['three'] },
        examples: [[1, 2.5, 'three']],
      },
    ],
    [
      'array of objects merges item schemas',
      [{ name: 'a', qty: 1 }, { name: 'b' }],
      {
        type: 'array',
        items: {
          type: 'object',
          properties: { name: { type: 'string', examples: ['b'] }, qty: { type: 'integer', examples: [1] } },
          required: ['name'],
        },
      },
    ],
    [
      'nested object, members in order, undefined members dropped',
      { b: { c: true }, a: null, skip: undefined },
      {
        type: 'object',
        properties: {
          b: { type: 'object', properties: { c: { type: 'boolean', examples: [true] } }, required: ['c'] },
          a: { type: 'null', examples: [null] },
        },
        required: ['b', 'a'],
      },
    ],
  ])('%s', (_name, value, expected) => {
    expect(inferSchema(value)).toEqual(expected);
  });

  it('truncates string examples to 200 characters without splitting a surrogate pair', () => {
    expect(inferSchema('x'.repeat(500)).examples).toEqual(['x'.repeat(200)]);
    const emoji = `${'x'.repeat(199)}😀tail`;
    const [example] = inferSchema(emoji).examples as [string];
    expect(example).toBe('x'.repeat(199));
  });

  it('keeps at most 20 elements in an array-of-scalars example and inspects at most 100 elements', () => {
    const list = Array.from({ length: 1000 }, (_, i) => (i < 100 ? i : `s${i}`));
    const schema = inferSchema(list);
    expect(schema.items).toEqual({ type: 'integer', examples: [99] });
    expect(schema.examples).toEqual([list.slice(0, SCHEMA_LIMITS.maxArrayExampleItems)]);
  });
});

describe('mergeSchemas', () => {
  const s = (value: unknown) => inferSchema(value);

  it.each<[string, unknown, unknown, JsonSchema['type']]>([
    ['integer + number → number', 1, 1.5, 'number'],
    ['number + integer → number', 1.5, 1, 'number'],
    ['string + number → sorted union', 'a', 1.5, ['number', 'string']],
    ['number + string → same sorted union', 1.5, 'a', ['number', 'string']],
    ['string + null → nullable union', 'a', null, ['null', 'string']],
    ['null + integer → nullable union', null, 3, ['integer', 'null']],
    ['integer + string', 1, 'x', ['integer', 'string']],
    ['boolean + boolean stays single', true, false, 'boolean'],
    ['object + string', { a: 1 }, 'x', ['object', 'string']],
  ])('%s', (_name, first, second, expected) => {
    expect(mergeSchemas(s(first), s(second)).type).toEqual(expected);
  });

  it('folds integer into number across three samples', () => {
    const merged = mergeSchemas(mergeSchemas(s(1), s('x')), s(2.5));
    expect(merged.type).toEqual(['number', 'string']);
    expect(merged.examples).toEqual([2.5]);
  });

  it('takes the example from the newer (second) schema and keeps the old one when the new has none', () => {
    expect(mergeSchemas(s('old'), s('new')).examples).toEqual(['new']);
    expect(mergeSchemas(s('old'), s({ a: 1 })).examples).toEqual(['old']);
  });

  it.each<[string, unknown, unknown, string[] | undefined, string[]]>([
    ['same keys stay required', { a: 1, b: 2 }, { a: 3, b: 4 }, ['a', 'b'], ['a', 'b']],
    ['key missing in the new sample becomes optional', { a: 1, b: 2 }, { a: 3 }, ['a'], ['a', 'b']],
    ['new key is added as optional', { a: 1 }, { a: 2, c: 3 }, ['a'], ['a', 'c']],
    ['disjoint keys are all optional', { a: 1 }, { b: 1 }, undefined, ['a', 'b']],
    ['empty object first, fields later', {}, { x: 1 }, undefined, ['x']],
  ])('%s', (_name, first, second, required, keys) => {
    const merged = mergeSchemas(s(first), s(second));
    expect(merged.required).toEqual(required);
    expect(Object.keys(merged.properties ?? {})).toEqual(keys);
  });

  it('merges nested objects recursively', () => {
    const merged = mergeSchemas(
      s({ customer: { name: 'a', vip: true } }),
      s({ customer: { name: 'b', age: 3 } }),
    );
    expect(merged.properties?.customer).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', examples: ['b'] },
        vip: { type: 'boolean', examples: [true] },
        age: { type: 'integer', examples: [3] },
      },
      required: ['name'],
    });
  });

  it('merges item schemas of arrays of objects', () => {
    const merged = mergeSchemas(
      s({ items: [{ sku: 'a', qty: 1 }] }),
      s({ items: [{ sku: 'b', price: 2.5 }] }),
    );
    expect(merged.properties?.items).toEqual({
      type: 'array',
      items: {
        type: 'object',
        properties: {
          sku: { type: 'string', examples: ['b'] },
          qty: { type: 'integer', examples: [1] },
          price: { type: 'number', examples: [2.5] },
        },
        required: ['sku'],
      },
    });
  });

  it.each<[string, unknown, unknown, JsonSchema]>([
    [
      'empty then non-empty',
      [],
      [{ id: 1 }],
      { type: 'object', properties: { id: { type: 'integer', examples: [1] } }, required: ['id'] },
    ],
    [
      'non-empty then empty',
      [{ id: 1 }],
      [],
      { type: 'object', properties: { id: { type: 'integer', examples: [1] } }, required: ['id'] },
    ],
    ['scalars then empty', ['a'], [], { type: 'string', examples: ['a'] }],
  ])('an empty array does not erase item knowledge: %s', (_name, first, second, items) => {
    expect(mergeSchemas(s(first), s(second)).items).toEqual(items);
  });

  it('drops the array example once the items become objects', () => {
    const merged = mergeSchemas(s(['a']), s([{ id: 1 }]));
    expect(merged.items?.type).toEqual(['object', 'string']);
    expect(merged.examples).toBeUndefined();
  });

  it('keeps an object side required set when the other side is not an object', () => {
    const merged = mergeSchemas(s({ a: 1 }), s(null));
    expect(merged).toEqual({
      type: ['null', 'object'],
      properties: { a: { type: 'integer', examples: [1] } },
      required: ['a'],
      examples: [null],
    });
  });

  it('treats a typeless schema as no observation', () => {
    expect(mergeSchemas({}, s('x'))).toEqual(s('x'));
    expect(mergeSchemas(s('x'), {})).toEqual(s('x'));
  });

  it('never mutates its inputs and never shares objects with them', () => {
    const a = deepFreeze(s({ a: 1, list: [{ x: 'y' }], tags: ['t'] }));
    const b = deepFreeze(s({ b: 2, list: [{ z: true }], tags: ['u'] }));
    const snapshotA = JSON.stringify(a);
    const snapshotB = JSON.stringify(b);
    const merged = mergeSchemas(a, b);
    expect(JSON.stringify(a)).toBe(snapshotA);
    expect(JSON.stringify(b)).toBe(snapshotB);
    expect(merged.properties?.a).not.toBe(a.properties?.a);
    expect(merged.properties?.b).not.toBe(b.properties?.b);
    expect(merged.properties?.tags?.examples?.[0]).not.toBe(b.properties?.tags?.examples?.[0]);
  });

  it('ignores keywords it does not know and normalises foreign type arrays', () => {
    const foreign = {
      type: ['string', 'integer', 'number', 'string'],
      format: 'email',
      examples: ['a', 'b'],
    };
    expect(mergeSchemas(foreign, {})).toEqual({ type: ['number', 'string'], examples: ['b'] });
  });
});

describe('learn', () => {
  it('first sample: $schema at the root only, fields, samples = 1', () => {
    const learned = learn(undefined, triggerItem);
    expect(learned.samples).toBe(1);
    expect(Object.keys(learned.jsonSchema)[0]).toBe('$schema');
    expect(learned.jsonSchema.$schema).toBe(SCHEMA_DIALECT);
    expect(learned.jsonSchema.properties?.body?.$schema).toBeUndefined();
    expect(learned.fields.map((f) => f.path)).toEqual([
      'method',
      'path',
      'params.id',
      'query.a',
      'headers.content-type',
      'body.param1',
      'body.param2',
      'files',
      'webhookUrl',
      'executionMode',
      'receivedAt',
    ]);
    expect(learned.fields.find((f) => f.path === 'body.param1')).toEqual({
      path: 'body.param1',
      expression: 'body.param1',
      type: 'string',
      example: 'x',
      optional: false,
    });
    expect(learned.fields.find((f) => f.path === 'files')).toMatchObject({ type: 'array', example: [] });
  });

  it('merges across samples instead of replacing, and counts them', () => {
    const learned = learnAll([
      { ...triggerItem, body: { param1: 'x', param2: 'y' } },
      { ...triggerItem, body: { param1: 7, param3: true } },
      { ...triggerItem, body: { param1: 'z', param3: false } },
    ]);
    expect(learned.samples).toBe(3);
    const body = learned.fields.filter((f) => f.path.startsWith('body.'));
    expect(body).toEqual([
      {
        path: 'body.param1',
        expression: 'body.param1',
        type: 'integer|string',
        example: 'z',
        optional: false,
      },
      { path: 'body.param2', expression: 'body.param2', type: 'string', example: 'y', optional: true },
      { path: 'body.param3', expression: 'body.param3', type: 'boolean', example: false, optional: true },
    ]);
    expect(learned.jsonSchema.properties?.body?.required).toEqual(['param1']);
  });

  it('is deterministic: the same samples give byte-identical output', () => {
    const samples = [
      triggerItem,
      { ...triggerItem, body: { list: [{ a: 1 }, { b: 'x' }], n: null } },
      { ...triggerItem, body: { list: [], n: 2.5 }, files: [{ field: 'f', size: 3 }] },
    ];
    expect(JSON.stringify(learnAll(samples))).toBe(JSON.stringify(learnAll(samples)));
  });

  it('survives a malformed previous record by starting over from the sample', () => {
    const previous = { jsonSchema: 'garbage', fields: [], samples: Number.NaN } as unknown as LearnedSchema;
    const learned = learn(previous, { a: 1 });
    expect(learned.samples).toBe(1);
    expect(learned.fields.map((f) => f.path)).toEqual(['a']);
  });

  it('an undefined sample leaves the learned structure intact', () => {
    const first = learn(undefined, { a: 1 });
    const second = learn(first, undefined);
    expect(second.jsonSchema).toEqual(first.jsonSchema);
    expect(second.samples).toBe(2);
  });
});

describe('flattenFields', () => {
  it.each<
    [
      string,
      unknown,
      Array<Partial<{ path: string; expression: string; type: string; example: unknown; optional: boolean }>>,
    ]
  >([
    ['scalar root', 'x', [{ path: '$', expression: '$', type: 'string', example: 'x', optional: false }]],
    [
      'header names are back-quoted in expressions',
      { headers: { 'content-type': 'application/json', 'x-hub-signature-256': '***' } },
      [
        { path: 'headers.content-type', expression: 'headers.`content-type`' },
        { path: 'headers.x-hub-signature-256', expression: 'headers.`x-hub-signature-256`' },
      ],
    ],
    [
      'JSONata keywords, digits, $ and spaces are quoted',
      { body: { and: 1, true: 2, '1st': 3, $var: 4, 'a b': 5, _ok: 6, ok2: 7 } },
      [
        { path: 'body.and', expression: 'body.`and`' },
        { path: 'body.true', expression: 'body.`true`' },
        { path: 'body.1st', expression: 'body.`1st`' },
        { path: 'body.$var', expression: 'body.`$var`' },
        { path: 'body["a b"]', expression: 'body.`a b`' },
        { path: 'body._ok', expression: 'body._ok' },
        { path: 'body.ok2', expression: 'body.ok2' },
      ],
    ],
    [
      'dots in keys are bracketed in paths; back-quotes in keys fall back to $lookup',
      { body: { 'a.b': 1, 'we`ird': { x: 1 } } },
      [
        { path: 'body["a.b"]', expression: 'body.`a.b`' },
        { path: 'body.we`ird.x', expression: '$lookup(body, "we`ird").x' },
      ],
    ],
    [
      'arrays of objects use [] in paths and plain steps in expressions',
      { body: { items: [{ name: 'a', tags: ['t1', 't2'], dims: { w: 1 } }] } },
      [
        { path: 'body.items[].name', expression: 'body.items.name', type: 'string', example: 'a' },
        { path: 'body.items[].tags', expression: 'body.items.tags', type: 'array', example: ['t1', 't2'] },
        { path: 'body.items[].dims.w', expression: 'body.items.dims.w', type: 'integer', example: 1 },
      ],
    ],
    [
      'arrays of arrays',
      { m: [[1, 2], [3]] },
      [{ path: 'm[]', expression: 'm', type: 'array', example: [3] }],
    ],
    ['empty objects contribute no fields', { params: {}, body: {} }, []],
  ])('%s', (_name, value, expected) => {
    const fields = flattenFields(inferSchema(value));
    expect(fields).toHaveLength(expected.length);
    expected.forEach((partial, i) => {
      expect(fields[i]).toMatchObject(partial);
    });
  });

  it('lists a field that is sometimes an object both as a leaf and with its members', () => {
    const fields = flattenFields(learnAll([{ body: 'raw text' }, { body: { a: 1 } }]).jsonSchema);
    expect(fields).toEqual([
      { path: 'body', expression: 'body', type: 'object|string', example: 'raw text', optional: false },
      // body may be a string, so body.a is not guaranteed even though every object had it.
      { path: 'body.a', expression: 'body.a', type: 'integer', example: 1, optional: true },
    ]);
  });

  it('propagates optional to the members of an optional object', () => {
    const fields = flattenFields(learnAll([{ customer: { name: 'a' } }, {}]).jsonSchema);
    expect(fields).toEqual([
      { path: 'customer.name', expression: 'customer.name', type: 'string', example: 'a', optional: true },
    ]);
  });

  it('marks members missing from some array elements as optional', () => {
    const fields = flattenFields(inferSchema({ items: [{ a: 1, b: 2 }, { a: 3 }] }));
    expect(fields.map((f) => [f.path, f.optional])).toEqual([
      ['items[].a', false],
      ['items[].b', true],
    ]);
  });

  it('reports nullable leaves with a union type and the latest example', () => {
    const fields = flattenFields(learnAll([{ note: 'hi' }, { note: null }]).jsonSchema);
    expect(fields).toEqual([
      { path: 'note', expression: 'note', type: 'null|string', example: null, optional: false },
    ]);
  });
});

describe('diffAgainstSchema', () => {
  const learned = learnAll([
    { body: { amount: 10, currency: 'EUR', items: [{ sku: 'a', qty: 1 }], note: 'x' } },
    { body: { amount: 12, currency: 'USD', items: [{ sku: 'b', qty: 2 }] } },
  ]).jsonSchema;

  it.each<[string, unknown, string[]]>([
    ['conforming payload', { body: { amount: 5, currency: 'EUR', items: [] } }, []],
    ['optional field present', { body: { amount: 5, currency: 'EUR', items: [], note: 'n' } }, []],
    ['float where integers were seen is accepted', { body: { amount: 5.5, currency: 'EUR', items: [] } }, []],
    [
      'wrong type',
      { body: { amount: '5', currency: 'EUR', items: [] } },
      ['body.amount: expected integer, got string'],
    ],
    [
      'null where not learned',
      { body: { amount: null, currency: 'EUR', items: [] } },
      ['body.amount: expected integer, got null'],
    ],
    [
      'missing required',
      { body: { currency: 'EUR', items: [] } },
      ['body.amount: required field is missing'],
    ],
    [
      'unknown new field',
      { body: { amount: 1, currency: 'EUR', items: [], extra: 1 } },
      ['body.extra: not in the learned schema'],
    ],
    [
      'array elements are checked and de-duplicated under []',
      { body: { amount: 1, currency: 'EUR', items: [{ sku: 1, qty: 1 }, { sku: 2, qty: 1 }, { qty: 1 }] } },
      ['body.items[].sku: expected string, got integer', 'body.items[].sku: required field is missing'],
    ],
    ['wrong container type', { body: 'text' }, ['body: expected object, got string']],
    ['root type', 'text', ['$: expected object, got string']],
    [
      'several differences in schema order, unknown fields last',
      { body: { zzz: true, amount: 'x', items: [] } },
      [
        'body.amount: expected integer, got string',
        'body.currency: required field is missing',
        'body.zzz: not in the learned schema',
      ],
    ],
  ])('%s', (_name, value, expected) => {
    expect(diffAgainstSchema(learned, value)).toEqual(expected);
  });

  it('accepts anything where nothing was observed', () => {
    expect(diffAgainstSchema({}, { anything: [1, 'x'] })).toEqual([]);
  });

  it('quotes and truncates hostile keys in messages', () => {
    const schema = inferSchema({ a: 1 });
    const longKey = 'k'.repeat(5000);
    const diffs = diffAgainstSchema(schema, { a: 1, 'x.y': 1, [longKey]: 1 });
    expect(diffs[0]).toBe('["x.y"]: not in the learned schema');
    expect(diffs[1]).toBe(`${'k'.repeat(SCHEMA_LIMITS.maxDisplayKeyLength)}…: not in the learned schema`);
  });

  it('caps the number of entries', () => {
    const wide = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`f${i}`, i]));
    expect(diffAgainstSchema(inferSchema({}), wide)).toHaveLength(SCHEMA_LIMITS.maxDiffs);
  });

  it('a learned schema accepts the samples it was learned from', () => {
    const samples = [triggerItem, { ...triggerItem, body: { param1: 3 }, query: {} }];
    const schema = learnAll(samples).jsonSchema;
    for (const sample of samples) expect(diffAgainstSchema(schema, sample)).toEqual([]);
  });
});

describe('hostile samples', () => {
  const hostileJson =
    '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"toString":"x","ok":1}';

  it.each(['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString'])(
    'learns "%s" as an ordinary own key without touching prototypes',
    (key) => {
      const sample = JSON.parse(`{"body":{"${key}":{"polluted":true}}}`);
      const learned = learnAll([sample, sample]);
      const props = learned.jsonSchema.properties?.body?.properties as Record<string, JsonSchema>;
      expect(Object.getPrototypeOf(props)).toBe(Object.prototype);
      expect(Object.hasOwn(props, key)).toBe(true);
      expect(Object.keys(props)).toEqual([key]);
      expect(learned.fields.map((f) => f.path)).toEqual([`body.${key}.polluted`]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty('polluted');
    },
  );

  it('round-trips through JSON with __proto__ intact and diffs it correctly', () => {
    const sample = JSON.parse(hostileJson);
    const learned = learn(undefined, sample);
    const reloaded = JSON.parse(JSON.stringify(learned)) as LearnedSchema;
    expect(reloaded).toEqual(learned);
    expect(learn(reloaded, sample).jsonSchema).toEqual(learned.jsonSchema);
    expect(diffAgainstSchema(reloaded.jsonSchema, sample)).toEqual([]);
    // A key that was never learned must not be found via Object.prototype.
    expect(diffAgainstSchema(inferSchema({ ok: 1 }), sample)).toEqual([
      '__proto__: not in the learned schema',
      'constructor: not in the learned schema',
      'toString: not in the learned schema',
    ]);
    expect(diffAgainstSchema(inferSchema({ ok: 1 }), { ok: 1 })).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not report members inherited from Object.prototype as missing or present', () => {
    const schema = inferSchema({ toString: 'x' });
    expect(diffAgainstSchema(schema, {})).toEqual(['toString: required field is missing']);
  });

  it('caps depth: deeper values keep their type only', () => {
    const schema = inferSchema(nested(200));
    expect(schemaDepth(schema)).toBe(SCHEMA_LIMITS.maxDepth + 1);
    expect(() => flattenFields(schema)).not.toThrow();
    expect(diffAgainstSchema(schema, nested(200))).toEqual([]);
    const merged = mergeSchemas(schema, inferSchema(nested(300)));
    expect(schemaDepth(merged)).toBe(SCHEMA_LIMITS.maxDepth + 1);
  });

  it('caps properties per object, in merges too', () => {
    const wide = (from: number) =>
      Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`k${from + i}`, i]));
    const first = inferSchema(wide(0));
    expect(Object.keys(first.properties ?? {})).toHaveLength(400);
    const merged = mergeSchemas(first, inferSchema(wide(400)));
    expect(Object.keys(merged.properties ?? {})).toHaveLength(SCHEMA_LIMITS.maxProperties);
    const huge = inferSchema(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])));
    expect(Object.keys(huge.properties ?? {})).toHaveLength(SCHEMA_LIMITS.maxProperties);
  });

  it('skips absurdly long keys', () => {
    const schema = inferSchema({ ['k'.repeat(SCHEMA_LIMITS.maxKeyLength + 1)]: 1, ok: 1 });
    expect(Object.keys(schema.properties ?? {})).toEqual(['ok']);
  });

  it('caps the total size of a schema, even when grown over many samples', () => {
    // 300 objects of 300 keys would be 90 000 nodes without the node budget.
    const sample = (n: number) =>
      Object.fromEntries(
        Array.from({ length: 300 }, (_, i) => [
          `o${n}_${i}`,
          Object.fromEntries(Array.from({ length: 300 }, (_, j) => [`k${j}`, j])),
        ]),
      );
    const countNodes = (s: JsonSchema): number =>
      1 +
      Object.values(s.properties ?? {}).reduce((sum, p) => sum + countNodes(p), 0) +
      (s.items ? countNodes(s.items) : 0);
    const one = inferSchema(sample(0));
    expect(countNodes(one)).toBeLessThanOrEqual(SCHEMA_LIMITS.maxNodes);
    let learned = learn(undefined, sample(0));
    for (let n = 1; n < 4; n++) learned = learn(learned, sample(n));
    expect(countNodes(learned.jsonSchema)).toBeLessThanOrEqual(SCHEMA_LIMITS.maxNodes);
  });

  it('handles a big array quickly by inspecting a bounded prefix', () => {
    const big = Array.from({ length: 200_000 }, (_, i) => ({ id: i, name: `n${i}` }));
    const started = performance.now();
    const schema = inferSchema({ big });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(schema.properties?.big?.items?.required).toEqual(['id', 'name']);
  });
});
