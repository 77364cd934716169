/**
 * Data-structure learning for webhook test captures.
 *
 * Every trigger item captured on a test URL is turned into a JSON Schema (draft 2020-12 subset) and
 * merged into the workflow's learned schema, so the structure grows across samples instead of being
 * replaced by the latest one. The same schema backs the UI's field picker (`flattenFields`) and the
 * production `schemaCheck` option (`diffAgainstSchema`).
 *
 * Samples are attacker-controlled (anyone who knows a test URL can send one), so every walk here is
 * bounded (depth, properties per object, array items, total nodes, key length) and property maps are
 * written with `Object.defineProperty` and read only after `Object.hasOwn`, so keys such as
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

/** JSONata words that would not be read as a field name in a path step. */
const JSONATA_RESERVED: ReadonlySet<string> = new Set([
  'and',
  'or',
  'in',
  'true',
  'false',
  'null',
  'function',
]);

interface Budget {
  remaining: number;
}

type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object' | 'undefined';

// ---------------------------------------------------------------------------------------------
// Small helpers

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Adds an own, enumerable data property even for keys like `__proto__` (plain assignment would set the prototype). */
function defineOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The JSON type a value serialises as (`undefined` for values JSON drops). */
function jsonTypeOf(value: unknown): JsonType {
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
function scalarExample(value: unknown): unknown {
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
function copyExample(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice(0, SCHEMA_LIMITS.maxArrayExampleItems).map(scalarExample);
  return scalarExample(value);
}

/** Sorted, de-duplicated types with integer folded into number when both occur. */
function normalizeTypes(types: Iterable<string>): string[] {
  const set = new Set(types);
  if (set.has('integer') && set.has('number')) set.delete('integer');
  return [...set].sort();
}

/** The schema's types, or undefined when it states none (it then carries no observation). */
function typesOf(schema: unknown): string[] | undefined {
  if (!isRecord(schema)) return undefined;
  const raw = schema.type;
  if (typeof raw === 'string') return [raw];
  if (Array.isArray(raw)) {
    const types = normalizeTypes(raw.filter((t): t is string => typeof t === 'string'));
    return types.length > 0 ? types : undefined;
  }
  return undefined;
}

function typeValue(types: string[]): string | string[] {
  return types.length === 1 ? types[0]! : types;
}

function propertiesOf(schema: JsonSchema): Record<string, unknown> | undefined {
  const props = schema.properties;
  return isRecord(props) ? props : undefined;
}

function propertyAt(props: Record<string, unknown>, key: string): JsonSchema {
  const value = Object.hasOwn(props, key) ? props[key] : undefined;
  return isRecord(value) ? (value as JsonSchema) : {};
}

function requiredOf(schema: JsonSchema): Set<string> {
  const req = schema.required;
  return new Set(Array.isArray(req) ? req.filter((k): k is string => typeof k === 'string') : []);
}

function itemsOf(schema: JsonSchema): JsonSchema | undefined {
  return isRecord(schema.items) ? (schema.items as JsonSchema) : undefined;
}

function latestExample(schema: JsonSchema): { value: unknown } | undefined {
  const examples = schema.examples;
  if (!Array.isArray(examples) || examples.length === 0) return undefined;
  // Our schemas hold exactly one example; for foreign ones the last entry is the most recent append.
  return { value: examples[examples.length - 1] };
}

/** True when the schema only describes scalars (or states no type, i.e. nothing was seen). */
function isScalarOnly(schema: JsonSchema | undefined): boolean {
  const types = schema === undefined ? undefined : typesOf(schema);
  return types === undefined || types.every((t) => SCALAR_TYPES.has(t));
}

/** Leaves and arrays of scalars carry an example; pure objects and arrays of objects do not. */
function carriesExample(types: string[], items: JsonSchema | undefined): boolean {
  if (types.some((t) => SCALAR_TYPES.has(t))) return true;
  return types.includes('array') && isScalarOnly(items);
}

function countNodes(schema: unknown, depth: number): number {
  if (!isRecord(schema) || depth > SCHEMA_LIMITS.maxDepth) return 0;
  let count = 1;
  const props = schema.properties;
  if (isRecord(props)) {
    for (const key of Object.keys(props)) count += countNodes(props[key], depth + 1);
  }
  count += countNodes(schema.items, depth + 1);
  return count;
}

// ---------------------------------------------------------------------------------------------
// Inference

/** Infer a JSON Schema (draft 2020-12 subset) from one JSON value. */
export function inferSchema(value: unknown): JsonSchema {
  return infer(value, 0, { remaining: SCHEMA_LIMITS.maxNodes });
}

function infer(value: unknown, depth: number, budget: Budget): JsonSchema {
  const type = jsonTypeOf(value);
  if (type === 'undefined') return {};
  budget.remaining -= 1;
  // Past the depth or node budget the value keeps its type but no inner structure.
  const describeInside = depth < SCHEMA_LIMITS.maxDepth && budget.remaining > 0;

  if (type === 'object') {
    if (!describeInside) return { type };
    const source = value as Record<string, unknown>;
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const key of Object.keys(source)) {
      if (required.length >= SCHEMA_LIMITS.maxProperties || budget.remaining <= 0) break;
      if (key.length > SCHEMA_LIMITS.maxKeyLength) continue;
      const child = source[key];
      // JSON drops undefined/function members, so they are not part of the structure.
      if (jsonTypeOf(child) === 'undefined') continue;
      defineOwn(properties, key, infer(child, depth + 1, budget));
      required.push(key);
    }
    const schema: JsonSchema = { type, properties };
    if (required.length > 0) schema.required = required;
    return schema;
  }

  if (type === 'array') {
    if (!describeInside) return { type };
    const list = value as unknown[];
    const inspected = list.slice(0, SCHEMA_LIMITS.maxArrayItems);
    let items: JsonSchema | undefined;
    for (const element of inspected) {
      // JSON writes undefined array elements as null.
      const elementSchema = infer(element === undefined ? null : element, depth + 1, budget);
      // Item nodes were already charged to `budget` above, so merging them needs no further charge.
      items =
        items === undefined
          ? elementSchema
          : mergeAt(items, elementSchema, depth + 1, { remaining: Infinity });
    }
    const schema: JsonSchema = { type };
    if (items !== undefined) schema.items = items;
    if (isScalarOnly(items)) {
      schema.examples = [list.slice(0, SCHEMA_LIMITS.maxArrayExampleItems).map(scalarExample)];
    }
    return schema;
  }

  return { type, examples: [scalarExample(value)] };
}

// ---------------------------------------------------------------------------------------------
// Merging

/**
 * Merge two schemas: types widen (integer+number → number; string+number → ["number","string"] sorted),
 * new properties added, properties missing from either side become optional (dropped from `required`),
 * array item schemas merged, `null` widens to a type union. `b` is taken as the newer observation, so
 * its examples win. Pure; never mutates inputs.
 */
export function mergeSchemas(a: JsonSchema, b: JsonSchema): JsonSchema {
  // Structure only in `b` is charged against what `a` already uses, so the schema stops growing at the cap.
  return mergeAt(a, b, 0, { remaining: SCHEMA_LIMITS.maxNodes - countNodes(a, 0) });
}

function mergeAt(a: JsonSchema, b: JsonSchema, depth: number, budget: Budget): JsonSchema {
  const typesA = typesOf(a);
  const typesB = typesOf(b);
  // A schema without a type records no observation (e.g. the sample was undefined): nothing to widen.
  if (typesA === undefined) return typesB === undefined ? {} : cloneSchema(b, depth);
  if (typesB === undefined) return cloneSchema(a, depth);

  const types = normalizeTypes([...typesA, ...typesB]);
  const result: JsonSchema = { type: typeValue(types) };

  if (depth < SCHEMA_LIMITS.maxDepth && types.includes('object')) {
    // An object-typed side without `properties` was cut off by a limit: its structure is unknown,
    // so it neither adds properties nor makes the other side's properties optional.
    const propsA = typesA.includes('object') ? propertiesOf(a) : undefined;
    const propsB = typesB.includes('object') ? propertiesOf(b) : undefined;
    if (propsA !== undefined || propsB !== undefined) {
      const properties: Record<string, JsonSchema> = {};
      const keys: string[] = [];
      if (propsA !== undefined) {
        for (const key of Object.keys(propsA)) {
          if (keys.length >= SCHEMA_LIMITS.maxProperties) break;
          const child =
            propsB !== undefined && Object.hasOwn(propsB, key)
              ? mergeAt(propertyAt(propsA, key), propertyAt(propsB, key), depth + 1, budget)
              : cloneSchema(propertyAt(propsA, key), depth + 1);
          defineOwn(properties, key, child);
          keys.push(key);
        }
      }
      if (propsB !== undefined) {
        for (const key of Object.keys(propsB)) {
          if (propsA !== undefined && Object.hasOwn(propsA, key)) continue;
          if (keys.length >= SCHEMA_LIMITS.maxProperties) break;
          const child = propertyAt(propsB, key);
          const cost = countNodes(child, depth + 1);
          if (cost > budget.remaining) continue;
          budget.remaining -= cost;
          defineOwn(properties, key, cloneSchema(child, depth + 1));
          keys.push(key);
        }
      }
      result.properties = properties;

      let isRequired: (key: string) => boolean;
      if (propsA !== undefined && propsB !== undefined) {
        const reqA = requiredOf(a);
        const reqB = requiredOf(b);
        isRequired = (key) => reqA.has(key) && reqB.has(key);
      } else {
        const req = requiredOf(propsA !== undefined ? a : b);
        isRequired = (key) => req.has(key);
      }
      const required = keys.filter(isRequired);
      if (required.length > 0) result.required = required;
    }
  }

  if (depth < SCHEMA_LIMITS.maxDepth && types.includes('array')) {
    const itemsA = typesA.includes('array') ? itemsOf(a) : undefined;
    const itemsB = typesB.includes('array') ? itemsOf(b) : undefined;
    // An empty array says nothing about its items, so the other side's item schema is kept as is.
    if (itemsA !== undefined && itemsB !== undefined) {
      result.items = mergeAt(itemsA, itemsB, depth + 1, budget);
    } else if (itemsA !== undefined) {
      result.items = cloneSchema(itemsA, depth + 1);
    } else if (itemsB !== undefined) {
      const cost = countNodes(itemsB, depth + 1);
      if (cost <= budget.remaining) {
        budget.remaining -= cost;
        result.items = cloneSchema(itemsB, depth + 1);
      }
    }
  }

  if (carriesExample(types, result.items)) {
    const example = latestExample(b) ?? latestExample(a);
    if (example !== undefined) result.examples = [copyExample(example.value)];
  }
  return result;
}

/** A fresh, normalised copy holding only the keywords this module understands, within the limits. */
function cloneSchema(schema: JsonSchema, depth: number): JsonSchema {
  const types = typesOf(schema);
  if (types === undefined) return {};
  const result: JsonSchema = { type: typeValue(types) };
  if (depth < SCHEMA_LIMITS.maxDepth && types.includes('object')) {
    const props = propertiesOf(schema);
    if (props !== undefined) {
      const properties: Record<string, JsonSchema> = {};
      const keys = Object.keys(props).slice(0, SCHEMA_LIMITS.maxProperties);
      for (const key of keys) defineOwn(properties, key, cloneSchema(propertyAt(props, key), depth + 1));
      result.properties = properties;
      const req = requiredOf(schema);
      const required = keys.filter((key) => req.has(key));
      if (required.length > 0) result.required = required;
    }
  }
  if (depth < SCHEMA_LIMITS.maxDepth && types.includes('array')) {
    const items = itemsOf(schema);
    if (items !== undefined) result.items = cloneSchema(items, depth + 1);
  }
  if (carriesExample(types, result.items)) {
    const example = latestExample(schema);
    if (example !== undefined) result.examples = [copyExample(example.value)];
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Learning

/** previous may be undefined (first sample). Returns the merged schema, flat fields, samples count. */
export function learn(previous: LearnedSchema | undefined, sample: unknown): LearnedSchema {
  const inferred = inferSchema(sample);
  const base = previous !== undefined && isRecord(previous.jsonSchema) ? previous.jsonSchema : undefined;
  const merged = base === undefined ? inferred : mergeSchemas(base, inferred);
  const previousSamples =
    previous !== undefined && Number.isSafeInteger(previous.samples) && previous.samples > 0
      ? previous.samples
      : 0;
  return {
    jsonSchema: { $schema: SCHEMA_DIALECT, ...merged },
    fields: flattenFields(merged),
    samples: previousSamples + 1,
  };
}

// ---------------------------------------------------------------------------------------------
// Field list

/** A key usable as a bare JSONata path step (conservative: ASCII identifiers that are not keywords). */
function isPlainName(key: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) && !JSONATA_RESERVED.has(key);
}

/** JSONata expression reaching `keys` from the item; array hops need no step since JSONata maps over arrays. */
function expressionFor(keys: readonly string[]): string {
  let expr = '';
  for (const key of keys) {
    if (isPlainName(key)) {
      expr = expr === '' ? key : `${expr}.${key}`;
    } else if (!key.includes('`')) {
      expr = expr === '' ? `\`${key}\`` : `${expr}.\`${key}\``;
    } else {
      // A back-quoted name cannot contain a back-quote, so fall back to $lookup with a string literal.
      expr = `$lookup(${expr === '' ? '$' : expr}, ${JSON.stringify(key)})`;
    }
  }
  return expr === '' ? '$' : expr;
}

/** Display path: `body.items[].name`; keys that would make it ambiguous are written `["a.b"]`. */
function appendPathKey(path: string, key: string, maxKeyLength = Number.POSITIVE_INFINITY): string {
  const shown = key.length > maxKeyLength ? `${key.slice(0, maxKeyLength)}…` : key;
  if (/^[^.[\]"\\\s\p{Cc}]+$/u.test(key)) return path === '' ? shown : `${path}.${shown}`;
  return `${path}[${JSON.stringify(shown)}]`;
}

/**
 * Flat field list, depth-first in property order: path like `body.param1`, `body.items[].name`;
 * expression is the JSONata expression to reach it. Only leaves (scalar types) and arrays of scalars
 * are listed; `optional` is true when the field, or any object or array above it, may be absent.
 */
export function flattenFields(schema: JsonSchema): LearnedField[] {
  const fields: LearnedField[] = [];
  collectFields(schema, [], '', false, 0, fields);
  return fields;
}

function collectFields(
  schema: JsonSchema,
  keys: string[],
  path: string,
  optional: boolean,
  depth: number,
  out: LearnedField[],
): void {
  const types = typesOf(schema);
  if (types === undefined || depth > SCHEMA_LIMITS.maxDepth) return;
  const items = types.includes('array') ? itemsOf(schema) : undefined;

  if (carriesExample(types, items)) {
    const example = latestExample(schema);
    out.push({
      path: path === '' ? '$' : path,
      expression: expressionFor(keys),
      type: types.join('|'),
      example: example === undefined ? undefined : copyExample(example.value),
      optional,
    });
  }

  const props = types.includes('object') ? propertiesOf(schema) : undefined;
  if (props !== undefined) {
    // When the value may also be something other than an object, none of its properties is guaranteed.
    const parentMayBeOther = optional || types.some((t) => t !== 'object');
    const required = requiredOf(schema);
    for (const key of Object.keys(props)) {
      collectFields(
        propertyAt(props, key),
        [...keys, key],
        appendPathKey(path, key),
        parentMayBeOther || !required.has(key),
        depth + 1,
        out,
      );
    }
  }

  if (items !== undefined && !isScalarOnly(items)) {
    collectFields(items, keys, `${path}[]`, optional || types.some((t) => t !== 'array'), depth + 1, out);
  }
}

// ---------------------------------------------------------------------------------------------
// Schema check

/**
 * For schemaCheck: the fields of `value` that differ from `schema`: wrong type, missing required, or
 * unknown new field, as entries like `body.amount: expected number, got string` or
 * `body.extra: not in the learned schema`. [] when it conforms. Entries are de-duplicated (array
 * elements share the `[]` path) and capped at SCHEMA_LIMITS.maxDiffs.
 */
export function diffAgainstSchema(schema: JsonSchema, value: unknown): string[] {
  const out = new Set<string>();
  diffAt(schema, value, '', 0, out);
  return [...out];
}

function displayPath(path: string): string {
  return path === '' ? '$' : path;
}

function diffAt(schema: JsonSchema, value: unknown, path: string, depth: number, out: Set<string>): void {
  if (out.size >= SCHEMA_LIMITS.maxDiffs || depth > SCHEMA_LIMITS.maxDepth) return;
  const types = typesOf(schema);
  // Nothing was observed here, so nothing can contradict it.
  if (types === undefined) return;

  const actual = jsonTypeOf(value);
  if (actual === 'undefined') {
    out.add(`${displayPath(path)}: required field is missing`);
    return;
  }
  // integer and number are one kind of field here: a learned `10` should not reject a later `10.5`
  // (merging those samples widens to number anyway), while string-vs-number stays a real mismatch.
  const numeric = actual === 'integer' || actual === 'number';
  const conforms =
    types.includes(actual) || (numeric && (types.includes('integer') || types.includes('number')));
  if (!conforms) {
    out.add(`${displayPath(path)}: expected ${types.join('|')}, got ${actual}`);
    return;
  }

  if (actual === 'object') {
    const props = propertiesOf(schema);
    // An object learned without properties was cut off by a limit: its members are unknown, not forbidden.
    if (props === undefined) return;
    const source = value as Record<string, unknown>;
    const required = requiredOf(schema);
    for (const key of Object.keys(props)) {
      const childPath = appendPathKey(path, key, SCHEMA_LIMITS.maxDisplayKeyLength);
      const present = Object.hasOwn(source, key) && jsonTypeOf(source[key]) !== 'undefined';
      if (present) {
        diffAt(propertyAt(props, key), source[key], childPath, depth + 1, out);
      } else if (required.has(key)) {
        if (out.size >= SCHEMA_LIMITS.maxDiffs) return;
        out.add(`${childPath}: required field is missing`);
      }
    }
    for (const key of Object.keys(source)) {
      if (out.size >= SCHEMA_LIMITS.maxDiffs) return;
      if (Object.hasOwn(props, key) || jsonTypeOf(source[key]) === 'undefined') continue;
      out.add(`${appendPathKey(path, key, SCHEMA_LIMITS.maxDisplayKeyLength)}: not in the learned schema`);
    }
    return;
  }

  if (actual === 'array') {
    const items = itemsOf(schema);
    if (items === undefined) return;
    const list = value as unknown[];
    const count = Math.min(list.length, SCHEMA_LIMITS.maxArrayItems);
    for (let i = 0; i < count; i++) {
      const element = list[i];
      diffAt(items, element === undefined ? null : element, `${path}[]`, depth + 1, out);
    }
  }
}
