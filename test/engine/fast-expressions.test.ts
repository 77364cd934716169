/**
 * The JSONata fast path (src/engine/fast-expressions.ts) against JSONata itself: whenever the fast
 * path answers, its answer is JSONata's (the same value, by Object.is: same number, same object),
 * and JSONata did not throw. Declining is always allowed. Property tests generate the expressions
 * from the subset's grammar (with a few shapes outside it) and the data (unicode strings, numbers
 * incl. NaN, ±0 and ±Infinity, numeric strings, booleans, null, arrays, nested objects, missing
 * fields, keys JSONata treats specially).
 */
import fc from 'fast-check';
import jsonata from 'jsonata';
import { describe, expect, it, vi } from 'vitest';
import {
  type CompiledExpression,
  compileTemplate,
  evaluate,
  renderTemplate,
  type Scope,
  type Template,
} from '../../src/engine/expressions.js';
import { compileFast, DECLINE } from '../../src/engine/fast-expressions.js';

type Outcome = { value: unknown } | { error: string };

async function viaJsonata(source: string, scope: Scope, maxDepth = 1000): Promise<Outcome> {
  try {
    // The reference run compares values, not budgets: a time budget short enough to matter here
    // ran out when the whole suite starved this worker of CPU (a flaky "JSONata threw" failure).
    const value = await jsonata(source, { stack: maxDepth, timeout: 60_000 }).evaluate(scope.input, {
      trigger: scope.trigger,
      steps: scope.steps,
      execution: scope.execution,
    });
    return { value };
  } catch (err) {
    return { error: String((err as { code?: unknown }).code) };
  }
}

/** The fast path's raw answer, DECLINE, or undefined when the expression is not in the subset. */
function viaFast(source: string, scope: Scope): { value: unknown } | typeof DECLINE | undefined {
  const fast = compileFast(jsonata(source).ast(), 1000);
  if (fast === undefined) return undefined;
  const value = fast(scope);
  return value === DECLINE ? DECLINE : { value };
}

const tally = { answered: 0, declined: 0, outside: 0 };

/** The property: an answer from the fast path is JSONata's. */
async function agrees(source: string, scope: Scope): Promise<void> {
  const fast = viaFast(source, scope);
  if (fast === undefined) {
    tally.outside++;
    return;
  }
  if (fast === DECLINE) {
    tally.declined++;
    return;
  }
  tally.answered++;
  const slow = await viaJsonata(source, scope);
  if ('error' in slow) throw new Error(`JSONata threw ${slow.error}, the fast path gave ${show(fast.value)}`);
  if (!Object.is(fast.value, slow.value))
    throw new Error(`fast path ${show(fast.value)} ≠ JSONata ${show(slow.value)}`);
}

function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  return JSON.stringify(value) ?? String(value);
}

// ---- data -------------------------------------------------------------------------------------

/** Keys of the generated objects; the names the generated paths use. */
const KEYS = ['a', 'b', 'body', 'code', '_jsonata_lambda', '_jsonata_function', 'sequence', '__proto__'];

const specialString = fc.constantFrom(
  '',
  ' ',
  'a',
  'A',
  ' a \t\n b\r ',
  '\t',
  '12',
  '-1.5e3',
  '007',
  '1e400',
  '0x1F',
  '0x1g',
  '0o17',
  '0b101',
  '1.',
  'true',
  'null',
  'ß',
  'İ',
  'ﬀ',
  '😀',
  'a\u0301',
  '\ud800',
);
const text = fc.oneof(
  specialString,
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
);
const number = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.double(),
  fc.constantFrom(0, -0, 0.1, 0.30000000000000004, 1e21, 2 ** 53 + 2, Number.NaN, Infinity, -Infinity),
);
const primitive = fc.oneof(text, number, fc.boolean(), fc.constant(null));

/** An object built with defineProperty, so that "__proto__" is an own key as JSON.parse makes it. */
function objectOf(value: fc.Arbitrary<unknown>): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .array(fc.tuple(fc.constantFrom(...KEYS), fc.option(value, { nil: undefined, freq: 8 })), {
      maxLength: 4,
    })
    .map((entries) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of entries)
        Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      return out;
    });
}

const { value: data } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    primitive,
    fc.array(tie('value'), { maxLength: 3 }),
    objectOf(tie('value')),
  ),
}));

const scopeArb: fc.Arbitrary<Scope> = fc
  .record({
    input: fc.oneof({ weight: 4, arbitrary: objectOf(data) }, { weight: 1, arbitrary: data }),
    trigger: fc.oneof({ weight: 4, arbitrary: objectOf(data) }, { weight: 1, arbitrary: data }),
    s: data,
  })
  .map(({ input, trigger, s }) => ({
    input,
    trigger,
    steps: { s } as Record<string, unknown>,
    execution: { id: 'ex-1', mode: 'test', workflowId: 'wf-1', attempt: 1 },
  }));

// ---- expressions --------------------------------------------------------------------------------

const name = fc.constantFrom(...KEYS.map((k) => `\`${k}\``), 'a', 'b', 'body', 'code', 'missing');
const names = fc.array(name, { minLength: 1, maxLength: 3 }).map((n) => n.join('.'));
const path = fc.oneof(
  names,
  names.map((n) => `$.${n}`),
  names.map((n) => `$$.${n}`),
  names.map((n) => `$trigger.${n}`),
  names.map((n) => `$steps.s.${n}`),
  names.map((n) => `$steps.${n}`),
  fc.constantFrom('$execution.id', '$execution.attempt', '$execution.missing'),
);
const literal = fc.oneof(
  text.map((s) => JSON.stringify(s)),
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? '-0' : String(n))),
  fc.constantFrom('true', 'false', 'null', '0.1', '1e400'),
);
const atom = fc.oneof(
  { weight: 5, arbitrary: path },
  { weight: 3, arbitrary: literal },
  { weight: 1, arbitrary: fc.constantFrom('$', '$$', '$trigger', '$steps', '$execution', '$steps.s') },
);
const OPERATORS = ['&', '=', '!=', '<', '<=', '>', '>=', '+', '-', '*', '/', '%', 'and', 'or'];
const FUNCTIONS = [
  'uppercase',
  'lowercase',
  'trim',
  'length',
  'string',
  'number',
  'boolean',
  'not',
  'exists',
];
// Shapes just outside the subset: they must be left to JSONata (compileFast gives undefined).
const outside = fc.constantFrom(
  'a[0]',
  'a.b[]',
  'a[]',
  '$string(a, true)',
  '$uppercase()',
  '$substring(a, 1)',
  'a.*',
  '**.a',
  '[a, b]',
  '{"k": a}',
  'a in b',
  'a.$uppercase(b)',
  '$x',
  '$uppercase',
  '$count(a)',
  '(a)[0]',
);

const { expr } = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    atom,
    fc
      .tuple(tie('expr'), fc.constantFrom(...OPERATORS), tie('expr'), fc.boolean())
      .map(([a, op, b, parens]) => (parens ? `(${a}) ${op} (${b})` : `${a} ${op} ${b}`)),
    fc.tuple(fc.constantFrom(...FUNCTIONS), tie('expr')).map(([f, a]) => `$${f}(${a})`),
    fc
      .tuple(tie('expr'), tie('expr'), fc.option(tie('expr')))
      .map(([c, a, b]) => (b === null ? `(${c}) ? (${a})` : `(${c}) ? (${a}) : (${b})`)),
    tie('expr').map((a) => `-(${a})`),
    fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `(${a}; ${b})`),
    outside,
  ),
}));

function parses(source: string): boolean {
  try {
    jsonata(source);
    return true;
  } catch {
    return false;
  }
}

// ---- tests --------------------------------------------------------------------------------------

const BENCH = [
  'body.param1',
  '$uppercase(body.param2)',
  '$trigger.path',
  'customer = "a"',
  'customer & "-" & code',
];

describe('fast path vs JSONata (property)', () => {
  it('answers as JSONata does for generated expressions and data', async () => {
    Object.assign(tally, { answered: 0, declined: 0, outside: 0 });
    await fc.assert(
      fc.asyncProperty(expr.filter(parses), scopeArb, (source, scope) => agrees(source, scope)),
      { numRuns: 4000 },
    );
    // Not vacuous: the fast path answered for a good share, and declined for some.
    expect(tally.answered).toBeGreaterThan(1000);
    expect(tally.declined).toBeGreaterThan(100);
  });

  it('answers as JSONata does for the common expressions on generated data', async () => {
    const sources = [
      ...BENCH,
      'body',
      '$',
      '$trigger',
      'a.b & b',
      'a = b',
      'a != "x"',
      'a < b',
      'a + 1',
      '-a',
      '$length(a) > 2 and $exists(b)',
      'a ? b : "none"',
      '$string(a)',
      '$number(a)',
      '$trim(a)',
      '$lowercase(a) & $uppercase(b)',
      '$not(a) or b',
      '$boolean(a)',
      '$steps.s.a',
      '$execution.id & "/" & a',
    ];
    const withFields = scopeArb.chain((scope) =>
      fc.record({ a: data, b: data, code: data, customer: data, body: objectOf(data) }).map((fields) => ({
        ...scope,
        input: { ...fields, body: { ...fields.body, param1: fields.a, param2: fields.b } },
      })),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...sources), withFields, (source, scope) => agrees(source, scope)),
      { numRuns: 3000 },
    );
  });
});

const scope = (input: unknown, more: Partial<Scope> = {}): Scope => ({
  input,
  trigger: { method: 'POST', path: 'orders/new', body: { id: 7 } },
  steps: { shape: { total: 42, tags: ['x'] } },
  execution: { id: 'ex-1', mode: 'test', workflowId: 'wf-1', attempt: 1 },
  ...more,
});

describe('fast path: what it answers', () => {
  const item = {
    body: { param1: 'a', param2: 'b', n: 0.1, items: [1, 2], empty: [], nested: { x: 'y' } },
    customer: 'a',
    code: 'B',
  };
  it.each<[string, unknown]>([
    ['body.param1', 'a'],
    ['$uppercase(body.param2)', 'B'],
    ['$trigger.path', 'orders/new'],
    ['customer = "a"', true],
    ['customer & "-" & code', 'a-B'],
    ['body.missing', undefined],
    ['body.param1.deeper', undefined],
    ['missing & "x"', 'x'],
    ['missing = missing', false],
    ['missing != 1', false],
    ['body.n & ""', '0.1'],
    ['body.n + 0.2 & ""', '0.3'],
    ['body.n + 0.2', 0.30000000000000004],
    ['body.items', item.body.items],
    ['body.empty', item.body.empty],
    ['body.nested', item.body.nested],
    ['body.items = 1', false],
    ['$steps.shape.total * 2', 84],
    ['$execution.id & "/" & $execution.attempt', 'ex-1/1'],
    ['$length("😀a")', 2],
    ['$trim("  a \\t\\n b  ")', 'a b'],
    ['$number("0x1F")', 31],
    ['$string(null) & true', 'nulltrue'],
    ['customer = "a" ? "yes" : "no"', 'yes'],
    // `$not(nothing)` is nothing, and `false or nothing` is false.
    ['$exists(body.missing) or $not(body.nested.z)', false],
  ])('%s', async (source, expected) => {
    expect(viaFast(source, scope(item))).toEqual({ value: expected });
    expect(await viaJsonata(source, scope(item))).toEqual({ value: expected });
  });

  it('returns the very object JSONata would (a path ending on an object or array)', () => {
    const s = scope(item);
    expect((viaFast('body.nested', s) as { value: unknown }).value).toBe(item.body.nested);
    expect((viaFast('body.items', s) as { value: unknown }).value).toBe(item.body.items);
  });
});

describe('fast path: what it declines or leaves to JSONata', () => {
  it.each<[string, unknown]>([
    // Arrays in the middle of a path: JSONata maps over them.
    ['items.x', { items: [{ x: 1 }, { x: 2 }] }],
    ['$.x', [{ x: 1 }]],
    ['x', [{ x: 1 }]],
    // Objects JSONata takes for functions (the last two: JSONata throws; found by the property test).
    ['o.x', { o: { _jsonata_lambda: true, x: 1 } }],
    ['$exists($)', { _jsonata_function: true }],
    ['$length(a) > 2 and $exists(b)', { a: 'abc', b: { _jsonata_function: true } }],
    // What JSONata throws on: wrong argument types, numbers where strings are wanted …
    ['$uppercase(n)', { n: 1 }],
    ['$uppercase(n)', { n: null }],
    ['$uppercase(n)', { n: ['a'] }],
    ['$number(n)', { n: 'abc' }],
    ['n + 1', { n: '1' }],
    ['n < "a"', { n: 1 }],
    ['n < o', { n: 1, o: {} }],
    ['n & ""', { n: Infinity }],
    // … and what it formats its own way.
    ['o & ""', { o: { a: 1.5 } }],
    ['o = o', { o: { a: 1 } }],
    ['o ? 1 : 2', { o: { a: 1 } }],
  ])('%s on %j', (source, input) => {
    expect(viaFast(source, scope(input))).toBe(DECLINE);
  });

  it('leaves shapes outside the subset to JSONata', () => {
    for (const source of ['a[0]', 'a.b[]', '$string(a, true)', '$uppercase()', '$sum(a)', 'a.*', '$x'])
      expect(compileFast(jsonata(source).ast(), 1000), source).toBeUndefined();
  });

  it('leaves an expression deeper than the depth budget to JSONata, exactly where JSONata stops it', async () => {
    // a & a & … & a: n binary nodes over a path (two levels): n + 2 levels of evaluation.
    const n = 30;
    const source = Array.from({ length: n + 1 }, () => 'a').join(' & ');
    const s = scope({ a: 'x' });
    for (const maxDepth of [n + 1, n + 2, n + 3]) {
      const fast = compileFast(jsonata(source).ast(), maxDepth);
      const slow = await viaJsonata(source, s, maxDepth);
      if (maxDepth < n + 2) {
        expect(slow).toEqual({ error: 'D1011' });
        expect(fast).toBeUndefined();
      } else {
        expect(slow).toEqual({ value: 'x'.repeat(n + 1) });
        expect(fast?.(s)).toBe('x'.repeat(n + 1));
      }
    }
  });
});

describe('rendering with the fast path', () => {
  const compile = (value: unknown): Template => {
    const { template, errors } = compileTemplate(value);
    if (errors.length > 0) throw errors[0];
    return template;
  };
  const only = (template: Template): CompiledExpression => {
    if (template.kind !== 'expression') throw new Error(template.kind);
    return template.expr;
  };

  it("evaluates the bench's five expressions without JSONata", async () => {
    const item = { body: { param1: 'a', param2: 'b' }, path: 'bench/flow', customer: 'a', code: 'B' };
    const expected = ['a', 'B', 'bench/flow', true, 'a-B'];
    for (const [i, source] of BENCH.entries()) {
      const expr = only(compile(`{{ ${source} }}`));
      expect(expr.fast).toBeDefined();
      const spy = vi.spyOn(expr.expression, 'evaluate');
      expect(await evaluate(expr, scope(item, { trigger: item }))).toBe(expected[i]);
      expect(spy).not.toHaveBeenCalled();
    }
  });

  it('falls back to JSONata when the fast path declines at run time', async () => {
    const expr = only(compile('{{ body.items.x }}'));
    expect(expr.fast).toBeDefined();
    const spy = vi.spyOn(expr.expression, 'evaluate');
    expect(await evaluate(expr, scope({ body: { items: [{ x: 1 }, { x: 2 }] } }))).toEqual([1, 2]);
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it("reports JSONata's error, code and position when the fast path declines", async () => {
    const template = compile({ x: 'n={{ $uppercase(body.n) }}' });
    const err = await renderTemplate(template, scope({ body: { n: 1 } })).catch((e: unknown) => e);
    expect(err).toMatchObject({ field: '/x', code: 'T0410' });
    expect((err as Error).message).toMatch(/at position \d+/);
  });

  it('renders a template mixing fast and JSONata-only expressions as JSONata alone would', async () => {
    const config = {
      a: '{{ body.param1 }}',
      b: ['{{ $sum(body.items) }}', 'x-{{ body.param1 & 1 }}-{{ body.missing }}', 3],
      c: { d: '{{ body.items.x }}', e: '{{ body.nested }}', f: null },
      ['__proto__']: '{{ $uppercase(body.param1) }}',
    };
    const input = { body: { param1: 'a', items: [1, 2], nested: { k: [1] } } };
    const rendered = (await renderTemplate(compile(config), scope(input))) as Record<string, unknown>;
    expect(rendered).toEqual({
      a: 'a',
      b: [3, 'x-a1-', 3],
      c: { d: undefined, e: { k: [1] }, f: null },
      ['__proto__']: 'A',
    });
    expect(Object.getPrototypeOf(rendered)).toBe(Object.prototype);
    expect(Object.keys(rendered.c as object)).toEqual(['d', 'e', 'f']);
    // A copy, not the input's own object.
    expect((rendered.c as { e: unknown }).e).not.toBe(input.body.nested);
  });
});
