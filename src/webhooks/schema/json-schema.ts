/**
 * The learned schema's shape and the small, bounded readers the three jobs on it share: inferring
 * and merging (infer.ts), listing fields for the UI's picker (fields.ts) and checking a production
 * item against it (diff.ts, the trigger's `schemaCheck`).
 *
 * Samples are attacker-controlled (anyone who knows a test URL can send one), so every walk is
 * bounded (depth, properties per object, array items, total nodes, key length) and property maps
 * are written with `Object.defineProperty` and read only after `Object.hasOwn`, so keys such as
 * `__proto__` or `constructor` stay ordinary data.
 */

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  examples?: unknown[];
  [k: string]: unknown;
}

export interface LearnedField {
  path: string;
  expression: string;
  type: string;
  example: unknown;
  optional: boolean;
}

export interface LearnedSchema {
  jsonSchema: JsonSchema;
  fields: LearnedField[];
  samples: number;
}

export const SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** Bounds on the work done for one sample and on the size of a learned schema. */
export const SCHEMA_LIMITS = Object.freeze({
  /** Nesting levels below the root that are described; deeper values keep only their type. */
  maxDepth: 32,
  /** Properties learned per object; later keys of a wider object are ignored. */
  maxProperties: 500,
  /** Array elements inspected to learn (and to check) an array's item schema. */
  maxArrayItems: 100,
  /** Schema nodes in one inferred or merged schema; beyond it new structure is not added. */
  maxNodes: 10_000,
  /** Keys longer than this are not learned: they are almost certainly not field names. */
  maxKeyLength: 256,
  /** Strings kept as examples are cut to this many UTF-16 code units. */
  maxExampleLength: 200,
  /** Elements kept in the example of an array of scalars. */
  maxArrayExampleItems: 20,
  /** Entries returned by diffAgainstSchema, so a 422 body stays small. */
  maxDiffs: 100,
  /** Characters of one key shown in a diff message. */
  maxDisplayKeyLength: 100,
});

const SCALAR_TYPES: ReadonlySet<string> = new Set(['null', 'boolean', 'integer', 'number', 'string']);

export interface Budget {
  remaining: number;
}

type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object' | 'undefined';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Adds an own, enumerable data property even for keys like `__proto__` (plain assignment would set the prototype). */
export function defineOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The JSON type a value serialises as (`undefined` for values JSON drops). */
export function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'string':
      return 'string';
    case 'bigint':
      return 'integer';
    case 'number':
      // NaN and ±Infinity serialise as null in JSON.
      if (!Number.isFinite(value)) return 'null';
      return Number.isInteger(value) ? 'integer' : 'number';
    case 'object':
      if (Array.isArray(value)) return 'array';
      // Dates serialise as ISO strings (invalid ones as null), which is what a stored item holds.
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'null' : 'string';
      return 'object';
    default:
      return 'undefined';
  }
}

function truncateString(value: string): string {
  const max = SCHEMA_LIMITS.maxExampleLength;
  if (value.length <= max) return value;
  // Do not cut a surrogate pair in half: a lone surrogate is not valid text.
  const code = value.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return value.slice(0, end);
}

/** A bounded, JSON-safe copy of a scalar to keep as an example. */
export function scalarExample(value: unknown): unknown {
  switch (jsonTypeOf(value)) {
    case 'string':
      return truncateString(value instanceof Date ? value.toISOString() : (value as string));
    case 'boolean':
      return value;
    case 'integer':
    case 'number':
      if (typeof value === 'bigint') {
        // JSON has no bigint; keep it exact when a number can hold it, as text otherwise.
        return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
      }
      return value;
    default:
      return null;
  }
}

/** Copy of a stored example (a scalar or an array of scalars) so outputs never share arrays with inputs. */
export function copyExample(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice(0, SCHEMA_LIMITS.maxArrayExampleItems).map(scalarExample);
  return scalarExample(value);
}

/** Sorted, de-duplicated types with integer folded into number when both occur. */
export function normalizeTypes(types: Iterable<string>): string[] {
  const set = new Set(types);
  if (set.has('integer') && set.has('number')) set.delete('integer');
  return [...set].sort();
}

/** The schema's types, or undefined when it states none (it then carries no observation). */
export function typesOf(schema: unknown): string[] | undefined {
  if (!isRecord(schema)) return undefined;
  const raw = schema.type;
  if (typeof raw === 'string') return [raw];
  if (Array.isArray(raw)) {
    const types = normalizeTypes(raw.filter((t): t is string => typeof t === 'string'));
    return types.length > 0 ? types : undefined;
  }
  return undefined;
}

export function typeValue(types: string[]): string | string[] {
  return types.length === 1 ? types[0]! : types;
}

export function propertiesOf(schema: JsonSchema): Record<string, unknown> | undefined {
  const props = schema.properties;
  return isRecord(props) ? props : undefined;
}

export function propertyAt(props: Record<string, unknown>, key: string): JsonSchema {
  const value = Object.hasOwn(props, key) ? props[key] : undefined;
  return isRecord(value) ? (value as JsonSchema) : {};
}

export function requiredOf(schema: JsonSchema): Set<string> {
  const req = schema.required;
  return new Set(Array.isArray(req) ? req.filter((k): k is string => typeof k === 'string') : []);
}

export function itemsOf(schema: JsonSchema): JsonSchema | undefined {
  return isRecord(schema.items) ? (schema.items as JsonSchema) : undefined;
}

export function latestExample(schema: JsonSchema): { value: unknown } | undefined {
  const examples = schema.examples;
  if (!Array.isArray(examples) || examples.length === 0) return undefined;
  // Our schemas hold exactly one example; for foreign ones the last entry is the most recent append.
  return { value: examples[examples.length - 1] };
}

/** True when the schema only describes scalars (or states no type, i.e. nothing was seen). */
export function isScalarOnly(schema: JsonSchema | undefined): boolean {
  const types = schema === undefined ? undefined : typesOf(schema);
  return types === undefined || types.every((t) => SCALAR_TYPES.has(t));
}

/** Leaves and arrays of scalars carry an example; pure objects and arrays of objects do not. */
export function carriesExample(types: string[], items: JsonSchema | undefined): boolean {
  if (types.some((t) => SCALAR_TYPES.has(t))) return true;
  return types.includes('array') && isScalarOnly(items);
}

export function countNodes(schema: unknown, depth: number): number {
  if (!isRecord(schema) || depth > SCHEMA_LIMITS.maxDepth) return 0;
  let count = 1;
  const props = schema.properties;
  if (isRecord(props)) {
    for (const key of Object.keys(props)) count += countNodes(props[key], depth + 1);
  }
  count += countNodes(schema.items, depth + 1);
  return count;
}

/** Display path: `body.items[].name`; keys that would make it ambiguous are written `["a.b"]`. */
export function appendPathKey(path: string, key: string, maxKeyLength = Number.POSITIVE_INFINITY): string {
  const shown = key.length > maxKeyLength ? `${key.slice(0, maxKeyLength)}…` : key;
  if (/^[^.[\]"\\\s\p{Cc}]+$/u.test(key)) return path === '' ? shown : `${path}.${shown}`;
  return `${path}[${JSON.stringify(shown)}]`;
}
