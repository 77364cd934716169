/**
 * `set`: build an item from named fields. `fields` maps a name to a value (usually an expression);
 * dotted names nest (`customer.name` → `{customer: {name}}`). With `keepInput` the fields are
 * merged into a copy of the input item instead of replacing it.
 */
import Type from 'typebox';
import type { FieldError } from '../../errors.js';
import { pointerEscape } from '../expressions.js';
import { defineStep, Expr } from './types.js';

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

export const setStep = defineStep({
  type: 'set',
  pure: true,
  description: 'Set fields (renamed, computed or constant) on the item.',
  config: Type.Object(
    {
      fields: Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.Unknown(), {
        maxProperties: 500,
      }),
      keepInput: Type.Optional(Expr(Type.Boolean())),
    },
    { additionalProperties: false },
  ),
  check(config) {
    const errors: FieldError[] = [];
    for (const name of Object.keys(config.fields)) {
      const segments = name.split('.');
      if (segments.some((s) => s === '')) {
        errors.push({ field: `/fields/${pointerEscape(name)}`, message: 'has an empty part between dots' });
      } else if (segments.some((s) => FORBIDDEN.has(s))) {
        errors.push({
          field: `/fields/${pointerEscape(name)}`,
          message: 'uses a reserved name (__proto__, prototype, constructor)',
        });
      }
    }
    return errors;
  },
  run(config, { input }) {
    const out: Record<string, unknown> = config.keepInput && isObject(input) ? structuredClone(input) : {};
    for (const [name, value] of Object.entries(config.fields)) {
      // A field whose expression found nothing is still listed, as null: the item keeps its shape.
      setPath(out, name.split('.'), value === undefined ? null : value);
    }
    return { output: out };
  },
});

function setPath(target: Record<string, unknown>, segments: string[], value: unknown): void {
  let node = target;
  for (const key of segments.slice(0, -1)) {
    const next = Object.hasOwn(node, key) ? node[key] : undefined;
    if (isObject(next)) {
      node = next;
    } else {
      const child: Record<string, unknown> = {};
      node[key] = child;
      node = child;
    }
  }
  node[segments[segments.length - 1]!] = value;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
