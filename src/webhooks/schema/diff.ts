/**
 * The trigger's `schemaCheck` (SPEC 5b): what in a production item differs from the learned schema.
 */
import {
  appendPathKey,
  itemsOf,
  type JsonSchema,
  jsonTypeOf,
  propertiesOf,
  propertyAt,
  requiredOf,
  SCHEMA_LIMITS,
  typesOf,
} from './json-schema.js';

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
