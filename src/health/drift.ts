/**
 * Schema drift (SPEC 7g): a production payload that lacks a field an expression reads
 * (reads.ts), or carries it with another type than the one learned from test captures. A payload
 * shape nobody reads is not drift: fields come and go in every provider's payloads.
 */
import type { JsonSchema } from '../webhooks/schema/json-schema.js';
import type { FieldRead } from './reads.js';

export interface Drift {
  /** Dotted (`body.customer.id`). */
  field: string;
  change: 'missing' | 'type';
  /** The learned type(s), when a schema was learned. */
  expected?: string;
  /** The payload's type; absent when missing. */
  actual?: string;
  /** The published version's steps whose expressions read the field. */
  steps: string[];
}

/** What drifted in one item, one entry per field read. */
export function driftOf(item: unknown, reads: readonly FieldRead[], schema: JsonSchema | undefined): Drift[] {
  const out: Drift[] = [];
  for (const read of reads) {
    const learned = schema ? learnedAt(schema, read.path) : undefined;
    // A field the learned schema never saw (or says may be absent) is not expected to be there.
    if (schema && !learned?.required) continue;
    const found = valueAt(item, read.path);
    const field = read.path.join('.');
    if (!found.present) {
      out.push({
        field,
        change: 'missing',
        ...(learned ? { expected: typesOf(learned.schema) } : {}),
        steps: read.steps,
      });
      continue;
    }
    if (!learned) continue;
    const actual = jsonType(found.value);
    const expected = typesOf(learned.schema);
    if (expected && !sameType(expected.split('|'), actual)) {
      out.push({ field, change: 'type', expected, actual, steps: read.steps });
    }
  }
  return out;
}

function valueAt(item: unknown, path: readonly string[]): { present: boolean; value?: unknown } {
  let value = item;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key))
      return { present: false };
    value = (value as Record<string, unknown>)[key];
  }
  return { present: true, value };
}

/** The schema of a path and whether every level of it was always present in the captures. */
function learnedAt(
  schema: JsonSchema,
  path: readonly string[],
): { schema: JsonSchema; required: boolean } | undefined {
  let node = schema;
  let required = true;
  for (const key of path) {
    const properties = node.properties;
    if (!properties || !Object.hasOwn(properties, key)) return undefined;
    required &&= (node.required ?? []).includes(key);
    node = properties[key]!;
  }
  return { schema: node, required };
}

function typesOf(schema: JsonSchema): string | undefined {
  const t = schema.type;
  if (t === undefined) return undefined;
  return (Array.isArray(t) ? t : [t]).join('|');
}

function sameType(expected: readonly string[], actual: string): boolean {
  return expected.includes(actual) || (actual === 'integer' && expected.includes('number'));
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}
