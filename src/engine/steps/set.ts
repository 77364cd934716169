/**
 * `set`: build an item from named fields. `fields` maps a name to a value (usually an expression);
 * dotted names nest (`customer.name` → `{customer: {name}}`). With `keepInput` the fields are
 * merged into a copy of the input item instead of replacing it.
 */
import Type from 'typebox';
import type { FieldError } from '../../errors.js';
import { defineEntry, pointerEscape } from '../expressions.js';
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
    // keepInput: a shallow copy of the input, and (setPath) a copy of each object a dotted field
    // writes into. The input is never changed, and what no field touches is shared with it (items
    // are never changed in place): structuredClone of the whole item cost more than the rest of
    // the step.
    const keep = config.keepInput && isObject(input);
    const out: Record<string, unknown> = keep ? copyOf(input) : {};
    let own: Set<object> | undefined;
    for (const name of Object.keys(config.fields)) {
      // A field whose expression found nothing is still listed, as null: the item keeps its shape.
      const value = config.fields[name] ?? null;
      // Most names have no dot: set at once, without splitting (reserved names were refused on save).
      if (!name.includes('.')) {
        out[name] = value;
        continue;
      }
      if (keep) own ??= new Set<object>([out]);
      setPath(out, name.split('.'), value, own);
    }
    return { output: out };
  },
});

/**
 * Sets `value` at `segments` in `target`. `own`: the objects this step made (undefined when it made
 * them all); any other object on the way is the input's, copied before it is written to.
 */
function setPath(
  target: Record<string, unknown>,
  segments: string[],
  value: unknown,
  own: Set<object> | undefined,
): void {
  let node = target;
  const last = segments.length - 1;
  for (let i = 0; i < last; i++) {
    const key = segments[i]!;
    const next = Object.hasOwn(node, key) ? node[key] : undefined;
    let child: Record<string, unknown>;
    if (isObject(next) && (own === undefined || own.has(next))) {
      child = next;
    } else {
      child = isObject(next) ? copyOf(next) : {};
      own?.add(child);
      node[key] = child;
    }
    node = child;
  }
  node[segments[last]!] = value;
}

/**
 * A shallow copy that the step then adds fields to. Not `{ ...source }`: V8 (11.3, Node 20) gives a
 * spread copy made at a site that has seen one shape a map outside the transition tree, so every
 * field added to it then made a new map, on every run (%HaveSameMap false from run to run; 0.7–0.8
 * µs for a copy and one field against 0.1–0.15 µs here, and 1.5 µs a request of the bench
 * workflow spent in Runtime_SetKeyedProperty making maps). `defineEntry`: an own `__proto__` key
 * of the source stays data, as the spread kept it.
 */
function copyOf(source: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) defineEntry(out, key, source[key]);
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
