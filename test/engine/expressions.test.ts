import { describe, expect, it } from 'vitest';
import {
  compileTemplate,
  ExpressionError,
  renderTemplate,
  type Scope,
  splitTemplate,
} from '../../src/engine/expressions.js';

const scope = (input: unknown = { body: { param1: 'a', param2: 'b', n: 2 } }): Scope => ({
  input,
  trigger: { method: 'POST', body: { param1: 'a' } },
  steps: { shape: { total: 42 } },
  execution: { id: 'ex-1', mode: 'test', workflowId: 'wf-1', attempt: 1 },
});

async function render(value: unknown, s: Scope = scope(), budget?: { timeoutMs: number; maxDepth: number }) {
  const { template, errors } = compileTemplate(value, '', budget);
  if (errors.length > 0) throw errors[0];
  return renderTemplate(template, s);
}

describe('functions as results', () => {
  // JSONata's functions are objects (some with cycles): they are left out like JavaScript ones.
  it.each([
    ['{{ $sum }}', undefined],
    ['{{ function($x) { $x } }}', undefined],
    ['{{ {"f": $sum, "g": function($x) { $x }, "a": 1} }}', { a: 1 }],
    ['{{ [1, $sum, 2] }}', [1, null, 2]],
    ['{{ $string($sum) }}', ''],
  ])('%s renders as %j', async (source, expected) => {
    expect(await render(source)).toEqual(expected);
  });

  it('a field whose expression is a function renders as nothing; the text around it stays', async () => {
    expect(await render({ fields: { f: '{{ $sum }}', t: 'x{{ $sum }}y' } })).toEqual({
      fields: { f: undefined, t: 'xy' },
    });
  });
});

describe('splitTemplate', () => {
  it.each([
    ['plain', ['plain']],
    ['{{ a }}', [{ source: ' a ', offset: 2 }]],
    ['x {{a}} y {{ b }}', ['x ', { source: 'a', offset: 4 }, ' y ', { source: ' b ', offset: 12 }]],
    // Braces of an object constructor and "}}" inside a string do not close the expression.
    ['{{ {"a": {"b": 1}} }}', [{ source: ' {"a": {"b": 1}} ', offset: 2 }]],
    ['{{ "}}" & a }}', [{ source: ' "}}" & a ', offset: 2 }]],
    ["{{ 'it\\'s }}' }}", [{ source: " 'it\\'s }}' ", offset: 2 }]],
    ['{{ /* }} */ a }}', [{ source: ' /* }} */ a ', offset: 2 }]],
  ])('splits %j', (text, parts) => {
    expect(splitTemplate(text)).toEqual({ parts });
  });

  it('reports an unclosed {{ with its position', () => {
    expect(splitTemplate('ab {{ c')).toEqual({ error: 'The "{{" at position 4 has no closing "}}".' });
  });
});

describe('rendering', () => {
  it.each<[string, unknown, unknown]>([
    ['a number stays a number', '{{ body.n * 2 }}', 4],
    ['a boolean stays a boolean', '{{ body.param1 = "a" }}', true],
    ['an object stays an object', '{{ {"x": body.param1} }}', { x: 'a' }],
    ['an array stays an array', '{{ [body.param1, body.param2] }}', ['a', 'b']],
    ['null stays null', '{{ null }}', null],
    ['nothing found is undefined', '{{ body.missing }}', undefined],
    ['text around makes a string', 'n={{ body.n }}', 'n=2'],
    ['objects in text are JSON', 'v={{ {"a": 1} }}', 'v={"a":1}'],
    ['nothing found in text is empty', '[{{ body.missing }}]', '[]'],
    ['two expressions make a string', '{{ body.param1 }}{{ body.param2 }}', 'ab'],
    ['strings without {{ are literal', 'body.param1', 'body.param1'],
    ['$ is the input', '{{ $.body.param2 }}', 'b'],
    ['$trigger is the trigger item', '{{ $trigger.method }}', 'POST'],
    ['$steps holds earlier outputs', '{{ $steps.shape.total }}', 42],
    ['$execution has id and mode', '{{ $execution.id & "/" & $execution.mode }}', 'ex-1/test'],
  ])('%s', async (_name, value, expected) => {
    expect(await render(value)).toEqual(expected);
  });

  it('renders nested objects and arrays, keeping literals', async () => {
    const out = await render({ a: ['{{ body.n }}', 'x', 3], b: { c: '{{ body.param1 }}' }, d: true });
    expect(out).toEqual({ a: [2, 'x', 3], b: { c: 'a' }, d: true });
  });

  it('returns plain JSON arrays, not JSONata sequences', async () => {
    const out = await render('{{ body.*[$type($) = "string"] }}');
    expect(out).toEqual(['a', 'b']);
    expect(Object.keys(out as object)).toEqual(['0', '1']);
  });

  it('does not let a literal value be shared between renders', async () => {
    const { template } = compileTemplate({ a: { b: 1 }, c: '{{ 1 }}' });
    const first = (await renderTemplate(template, scope())) as { a: { b: number } };
    first.a.b = 99;
    expect(await renderTemplate(template, scope())).toEqual({ a: { b: 1 }, c: 1 });
  });

  it('treats "__proto__" as an ordinary key', async () => {
    const out = (await render({ ['__proto__']: '{{ 1 }}' } as Record<string, unknown>)) as object;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__']);
  });
});

describe('errors', () => {
  it('reports a compile error with the field and the position', () => {
    const { errors } = compileTemplate({ fields: { total: 'sum: {{ $sum(body.x }}' } });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ExpressionError);
    expect(errors[0]!.field).toBe('/fields/total');
    expect(errors[0]!.expression).toBe(' $sum(body.x ');
    expect(errors[0]!.position).toBeGreaterThan(0);
    expect(errors[0]!.message).toMatch(/at position \d+/);
  });

  it('escapes JSON pointer segments', () => {
    const { errors } = compileTemplate({ headers: { 'a/b~c': '{{ ( }}' } });
    expect(errors[0]!.field).toBe('/headers/a~1b~0c');
  });

  it('refuses an empty expression', () => {
    expect(compileTemplate('{{  }}').errors[0]!.message).toContain('empty');
  });

  it('reports an evaluation error with the field, expression and position', async () => {
    const { template } = compileTemplate({ x: '{{ body.param1 + 1 }}' });
    const err = await renderTemplate(template, scope()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExpressionError);
    expect((err as ExpressionError).field).toBe('/x');
    expect((err as ExpressionError).code).toBe('T2001');
    // JSONata's position: the 1-based end of the offending token, here the "+".
    expect((err as ExpressionError).position).toBe(14);
    expect((err as ExpressionError).message).toContain('at position 14');
  });

  it('surfaces $error() messages', async () => {
    await expect(render('{{ $error("nope") }}')).rejects.toThrow('nope');
  });
});

describe('budgets', () => {
  it('stops a runaway recursion by depth', async () => {
    const err = (await render('{{ ($f := function($n){ 1 + $f($n) }; $f(1)) }}').catch(
      (e) => e,
    )) as ExpressionError;
    expect(err).toBeInstanceOf(ExpressionError);
    expect(err.code).toBe('budget_depth');
    expect(err.message).toMatch(/nested deeper than its budget of 1000 levels/);
  });

  it('stops an endless tail-call loop by time', async () => {
    const started = Date.now();
    const err = (await render('{{ ($f := function(){ $f() }; $f()) }}', scope(), {
      timeoutMs: 200,
      maxDepth: 1000,
    }).catch((e) => e)) as ExpressionError;
    expect(err.code).toBe('budget_time');
    expect(err.message).toMatch(/ran longer than its budget of 200 ms/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('stops long work by time', async () => {
    const err = (await render('{{ [1..10000000].($ * 2) }}', scope(), {
      timeoutMs: 200,
      maxDepth: 1000,
    }).catch((e) => e)) as ExpressionError;
    expect(err.code).toBe('budget_time');
  });

  it('lets the event loop run while an expression works', async () => {
    let last = Date.now();
    let longestGap = 0;
    const timer = setInterval(() => {
      const now = Date.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 5);
    await render('{{ ($loop := function(){ $loop() }; $loop()) }}', scope(), {
      timeoutMs: 600,
      maxDepth: 1000,
    }).catch(() => undefined);
    // One more tick, so a gap that ends with the evaluation is measured too.
    await new Promise((r) => setTimeout(r, 20));
    clearInterval(timer);
    // Without yielding, the loop would hold the event loop for the whole 600 ms.
    expect(longestGap).toBeLessThan(300);
  });

  it('allows ordinary recursion within the budget', async () => {
    expect(await render('{{ ($f := function($n){ $n = 0 ? 0 : 1 + $f($n - 1) }; $f(100)) }}')).toBe(100);
  });

  it('budgets each evaluation, not the compiled expression', async () => {
    const { template } = compileTemplate('{{ $sum([1..1000]) }}', '', { timeoutMs: 200, maxDepth: 1000 });
    const results = await Promise.all(Array.from({ length: 20 }, () => renderTemplate(template, scope())));
    expect(results).toEqual(Array(20).fill(500500));
  });
});
