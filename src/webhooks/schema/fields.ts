/**
 * The learned schema as the flat field list of the UI's picker (`GET /workflows/:id/schema`'s
 * `fields`): display paths and the JSONata expression that reaches each field.
 */
import {
  appendPathKey,
  carriesExample,
  copyExample,
  isScalarOnly,
  itemsOf,
  type JsonSchema,
  latestExample,
  type LearnedField,
  propertiesOf,
  propertyAt,
  requiredOf,
  SCHEMA_LIMITS,
  typesOf,
} from './json-schema.js';

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
