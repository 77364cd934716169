import { describe, expect, it } from 'vitest';
import { compileTemplate, renderTemplate } from '../../src/engine/expressions.js';
import {
  describeMissing,
  hasExpression,
  type Missing,
  render,
  type Scope,
  templateError,
  templateErrors,
} from '../../web/src/lib/expressions.js';

const scope: Scope = {
  input: { name: 'Ann', n: 3, tags: ['a', 'b'], nested: { deep: true }, 'content-type': 'json' },
  trigger: { body: { param1: 'a' }, headers: { 'x-id': '7' } },
  steps: { first: { total: 42 }, 'step two': { ok: true } },
  execution: { id: 'exec-1', mode: 'test', workflowId: 'wf-1', attempt: 2 },
};

describe('hasExpression', () => {
  it('is true when the text opens an expression', () => {
    expect(hasExpression('{{ $ }}')).toBe(true);
    expect(hasExpression('a {{ b')).toBe(true);
    expect(hasExpression('plain')).toBe(false);
    expect(hasExpression('{ x }')).toBe(false);
    expect(hasExpression('')).toBe(false);
  });
});

describe('templateError', () => {
  it('is undefined for text without expressions and for valid expressions', () => {
    expect(templateError('plain text } }}')).toBeUndefined();
    expect(templateError('{{ body.param1 }}')).toBeUndefined();
    expect(templateError('Hi {{ name }}, {{ $count(tags) }} tags')).toBeUndefined();
    expect(templateError('{{ {"a": {"b": 1}} }}')).toBeUndefined();
    expect(templateError('{{ "}}" & name }}')).toBeUndefined();
  });

  it('reports an unclosed {{ with its position', () => {
    expect(templateError('a {{ b')).toBe('The "{{" at position 3 has no closing "}}".');
    expect(templateError('{{ 1 }} {{ }')).toBe('The "{{" at position 9 has no closing "}}".');
    expect(templateError('{{ "abc }}')).toBe('The "{{" at position 1 has no closing "}}".');
  });

  it('reports an empty expression', () => {
    expect(templateError('{{ }}')).toBe('The expression {{ }} is empty.');
    expect(templateError('x {{}} y')).toBe('The expression {{ }} is empty.');
  });

  it("reports JSONata's syntax error as a sentence with its position", () => {
    expect(templateError('{{ ( }}')).toBe('Expected ")" before end of expression. (at position 3)');
    const message = templateError('ok {{ name }} then {{ a.b.c]] }}');
    expect(message).toMatch(/^Syntax error: "\]"\. \(at position \d+\)$/);
  });

  // Issue 17 #6: one convention, the server's — a 1-based character position in the text between
  // `{{` and `}}` (spaces included), in the same words, so the inline message and the server's agree.
  it.each([
    '{{ 1 + }}',
    '{{   a.b.c]] }}',
    '{{ ( }}',
    'ok {{ name }} then {{ a.b.c]] }}',
    '{{\n\t  foo( }}',
    '{{ $x := }}',
    '{{ 1 + ) }}',
    '{{ a.\n  b] }}',
  ])('says what the server says for %j', (text) => {
    const server = compileTemplate(text, '/x').errors[0]?.message;
    expect(server).toMatch(/\(at position \d+\)$/);
    expect(templateError(text)).toBe(server);
  });

  it('counts the position from the first character after {{, its spaces included', () => {
    // " 1 + " ends at character 5: JSONata points past the end of the expression.
    expect(templateError('{{ 1 + }}')).toBe('Unexpected end of expression. (at position 5)');
    expect(templateError('{{1 + }}')).toBe('Unexpected end of expression. (at position 4)');
  });

  it('gives the same answer again for a cached expression', () => {
    const first = templateError('{{ 1 + }}');
    expect(first).toMatch(/^Unexpected end of expression\./);
    expect(templateError('{{ 1 + }}')).toBe(first);
    expect(templateError('{{ 1 + 1 }}')).toBeUndefined();
  });
});

describe('templateErrors', () => {
  it('finds every error in nested objects and arrays, with the path to each', () => {
    const config = {
      fields: { ok: '{{ name }}', bad: '{{ ( }}', list: ['fine', 'a {{ b', { inner: '{{ }}' }] },
      status: 200,
      flag: null,
    };
    expect(templateErrors(config)).toEqual([
      { at: '/fields/bad', message: 'Expected ")" before end of expression. (at position 3)' },
      { at: '/fields/list/1', message: 'The "{{" at position 3 has no closing "}}".' },
      { at: '/fields/list/2/inner', message: 'The expression {{ }} is empty.' },
    ]);
  });

  it('is empty for values without errors, and starts from the given path', () => {
    expect(templateErrors({ a: ['{{ 1 }}', 2, true, null] })).toEqual([]);
    expect(templateErrors(42)).toEqual([]);
    expect(templateErrors('{{ }}', '/url')).toEqual([
      { at: '/url', message: 'The expression {{ }} is empty.' },
    ]);
  });
});

describe('render', () => {
  it('leaves values without expressions as they are', async () => {
    expect(await render('plain', scope)).toBe('plain');
    expect(await render(7, scope)).toBe(7);
    expect(await render(null, scope)).toBeNull();
    expect(await render(true, scope)).toBe(true);
    expect(await render({ a: ['x', 1] }, scope)).toEqual({ a: ['x', 1] });
  });

  it('keeps the type of a value that is exactly one expression', async () => {
    expect(await render('{{ n }}', scope)).toBe(3);
    expect(await render('{{ n > 2 }}', scope)).toBe(true);
    expect(await render('{{ tags }}', scope)).toEqual(['a', 'b']);
    expect(await render('{{ nested }}', scope)).toEqual({ deep: true });
    expect(await render('{{ null }}', scope)).toBeNull();
  });

  it('makes a string when there is text around, showing nothing for missing or null values', async () => {
    expect(await render('Hi {{ name }}!', scope)).toBe('Hi Ann!');
    expect(await render('n={{ n }} ok={{ nested.deep }}', scope)).toBe('n=3 ok=true');
    expect(await render('[{{ nothing }}|{{ null }}]', scope)).toBe('[|]');
    expect(await render('{{ tags }} {{ nested }}', scope)).toBe('["a","b"] {"deep":true}');
  });

  it('gives undefined when a lone expression finds nothing', async () => {
    expect(await render('{{ nothing }}', scope)).toBeUndefined();
  });

  it('binds $ to the input, and $trigger, $steps and $execution', async () => {
    expect(await render('{{ $.name }}', scope)).toBe('Ann');
    expect(await render('{{ `content-type` }}', scope)).toBe('json');
    expect(await render('{{ $trigger.body.param1 }}', scope)).toBe('a');
    expect(await render("{{ $trigger.headers.'x-id' }}", scope)).toBe('7');
    expect(await render('{{ $steps.first.total + 1 }}', scope)).toBe(43);
    expect(await render('{{ $lookup($steps, "step two").ok }}', scope)).toBe(true);
    expect(await render('{{ $execution.mode }}/{{ $execution.attempt }}', scope)).toBe('test/2');
  });

  it('returns plain JSON: no JSONata sequences or infinities', async () => {
    const sequence = await render('{{ tags.$uppercase($) }}', scope);
    expect(sequence).toEqual(['A', 'B']);
    expect(Object.getPrototypeOf(sequence)).toBe(Array.prototype);
    expect(Object.hasOwn(sequence as object, 'sequence')).toBe(false);
    expect(await render('{{ 1/0 }}', scope)).toBeNull();
  });

  it('renders every string in objects and arrays, keeping __proto__ as a plain key', async () => {
    const config = JSON.parse(
      '{"a": ["{{ n }}", "x{{ n }}"], "__proto__": "{{ name }}", "b": {"c": "{{ nested }}"}}',
    );
    const out = (await render(config, scope)) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['a', '__proto__', 'b']);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toBe('Ann');
    expect(out.a).toEqual([3, 'x3']);
    expect(out.b).toEqual({ c: { deep: true } });
  });

  it('throws the syntax error as a sentence', async () => {
    await expect(render('a {{ b', scope)).rejects.toThrow('The "{{" at position 3 has no closing "}}".');
    await expect(render('{{ }}', scope)).rejects.toThrow('The expression {{ }} is empty.');
    await expect(render({ deep: ['{{ ( }}'] }, scope)).rejects.toThrow(/^Expected "\)" before end/);
  });

  it('throws evaluation errors as sentences ending with where they happened', async () => {
    await expect(render('{{ $error("boom") }}', scope)).rejects.toThrow(/^boom\. \(at position \d+\)$/);
    // Counted from the first character after {{, as the server counts (issue 17 #6).
    const padded = await render('{{   $error("boom") }}', scope).catch((err: Error) => err.message);
    const tight = await render('{{$error("boom")}}', scope).catch((err: Error) => err.message);
    expect(padded).toBe('boom. (at position 10)');
    expect(tight).toBe('boom. (at position 7)');
    const { template } = compileTemplate('{{   $error("boom") }}', '/x');
    await expect(renderTemplate(template, scope)).rejects.toThrow(padded);
    await expect(render('x {{ $number("x") }}', scope)).rejects.toThrow(
      /^Unable to cast value to a number: "x"\./,
    );
  });

  it('stops an expression that runs too long or nests too deeply', async () => {
    await expect(
      render('{{ $map([1..1000000], function($v){ $v + 1 }) ~> $count() }}', scope),
    ).rejects.toThrow('The expression takes too long (a loop that never ends?).');
    await expect(render('{{ ($f := function($n){ 1 + $f($n + 1) }; $f(0)) }}', scope)).rejects.toThrow(
      /^The expression (nests too deeply \(a recursion that never ends\?\)|takes too long \(a loop that never ends\?\))\.$/,
    );
  });

  it('renders as the engine does', async () => {
    const configs: unknown[] = [
      'Hi {{ name }}!',
      '{{ n * 2 }}',
      '{{ tags }}',
      '{{ tags[0] }}{{ tags[1] }}',
      '{{ nothing }}',
      'a{{ nothing }}b{{ null }}c',
      '{{ nested }} and {{ tags }}',
      '{{ $trigger.body }}',
      '{{ $steps.first }}',
      '{{ $execution }}',
      '{{ {"a": {"b": n}} }}',
      '{{ "}}" & name }}',
      '{{ tags.$uppercase($) }}',
      '{{ $count(tags) > 1 ? "many" : "few" }}',
      '{{ 1/0 }}',
      '{{ 0.1 + 0.2 }}',
      { list: ['{{ n }}', 'x', 5, null, { y: '{{ nested.deep }}' }], text: 'n is {{ n }}' },
    ];
    for (const config of configs) {
      const { template, errors } = compileTemplate(config);
      expect(errors).toEqual([]);
      expect({ config, out: await render(config, scope) }).toEqual({
        config,
        out: await renderTemplate(template, scope),
      });
    }
  });
});

// Issue 17 #7: a key whose expression finds nothing vanishes from JSON; the preview says so.
describe('missing values', () => {
  it('reports each expression that found nothing, where it is and what becomes of it', async () => {
    const missing: Missing[] = [];
    const out = await render(
      { name: '{{ body.param1 }}', greeting: 'Hi {{ nobody }}!', list: ['{{ nothing }}'], ok: '{{ name }}' },
      scope,
      missing,
    );
    expect(JSON.parse(JSON.stringify(out))).toEqual({ greeting: 'Hi !', list: [null], ok: 'Ann' });
    expect(missing).toEqual([
      { at: '/name', expression: 'body.param1', effect: 'key' },
      { at: '/greeting', expression: 'nobody', effect: 'text' },
      { at: '/list/0', expression: 'nothing', effect: 'item' },
    ]);
    expect(describeMissing(missing)).toEqual([
      'name — missing: body.param1 has no value (the key is left out)',
      'greeting — missing: nobody has no value (it is left empty in the text)',
      'list › 0 — missing: nothing has no value (the item is null)',
    ]);
  });

  it('reports the whole value, and nothing when every expression finds a value', async () => {
    const missing: Missing[] = [];
    expect(await render('{{ body.param1 }}', scope, missing)).toBeUndefined();
    expect(describeMissing(missing)).toEqual(['missing: body.param1 has no value (it gives nothing)']);
    const none: Missing[] = [];
    await render({ a: '{{ name }}', b: '{{ null }}', c: 'x {{ n }}' }, scope, none);
    expect(none).toEqual([]);
  });

  it('agrees with the engine on what vanishes', async () => {
    const config = { name: '{{ body.param1 }}', kept: '{{ name }}', text: 'a{{ nope }}b' };
    const { template } = compileTemplate(config);
    const engine = JSON.stringify(await renderTemplate(template, scope));
    expect(JSON.stringify(await render(config, scope))).toBe(engine);
    expect(engine).toBe('{"kept":"Ann","text":"ab"}');
  });
});
