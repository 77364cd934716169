import { describe, expect, it } from 'vitest';
import { validateSteps } from '../../../src/engine/validate.js';
import { setStep } from '../../../src/engine/steps/set.js';
import { stepContext } from './helpers.js';

describe('set step', () => {
  it.each<[string, Record<string, unknown>, boolean | undefined, unknown, unknown]>([
    ['replaces the item with the fields', { a: 1 }, undefined, { x: 1 }, { a: 1 }],
    [
      'nests dotted names',
      { 'customer.name': 'Ann', 'customer.age': 3 },
      false,
      {},
      { customer: { name: 'Ann', age: 3 } },
    ],
    [
      'merges into the input with keepInput',
      { b: 2, 'c.d': 3 },
      true,
      { a: 1, c: { e: 4 } },
      { a: 1, b: 2, c: { e: 4, d: 3 } },
    ],
    ['replaces a non-object on the way', { 'a.b': 1 }, true, { a: 'text' }, { a: { b: 1 } }],
    ['ignores keepInput when the input is not an object', { a: 1 }, true, [1, 2], { a: 1 }],
    ['lists a field that found nothing as null', { a: undefined }, false, {}, { a: null }],
  ])('%s', async (_name, fields, keepInput, input, expected) => {
    const out = await setStep.run({ fields, keepInput }, stepContext(input));
    expect(out.output).toEqual(expected);
  });

  it('does not change its input', async () => {
    const input = { a: { b: 1, d: { e: 1 } }, f: { g: 1 } };
    const out = await setStep.run(
      { fields: { 'a.c': 2, 'a.d.h': 3, 'a.x': 4, f: 5 }, keepInput: true },
      stepContext(input),
    );
    expect(input).toEqual({ a: { b: 1, d: { e: 1 } }, f: { g: 1 } });
    expect(out.output).toEqual({ a: { b: 1, c: 2, d: { e: 1, h: 3 }, x: 4 }, f: 5 });
  });

  it('keeps a key named __proto__ of its input as data, without touching any prototype', async () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "a": {"__proto__": {"b": 1}}}');
    const out = await setStep.run({ fields: { 'a.c': 1 }, keepInput: true }, stepContext(input));
    expect(JSON.stringify(out.output)).toBe(
      '{"__proto__":{"polluted":true},"a":{"__proto__":{"b":1},"c":1}}',
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(out.output)).toBe(Object.prototype);
  });

  it.each([
    [{ fields: { 'a..b': 1 } }, '/steps/0/fields/a..b', 'empty part'],
    [{ fields: { '__proto__.x': 1 } }, '/steps/0/fields/__proto__.x', 'reserved'],
    [{ fields: {}, keepInput: 'yes' }, '/steps/0/keepInput', 'must be boolean'],
    [{}, '/steps/0/fields', 'is required'],
    [{ fields: {}, extra: 1 }, '/steps/0/extra', 'is not a known field'],
  ])('refuses %j on save', (config, field, message) => {
    const errors = validateSteps([{ name: 's', type: 'set', ...config }]);
    expect(errors[0]?.field).toBe(field);
    expect(errors[0]?.message).toContain(message);
  });

  it('accepts an expression for keepInput', () => {
    expect(validateSteps([{ name: 's', type: 'set', fields: {}, keepInput: '{{ true }}' }])).toEqual([]);
  });
});
