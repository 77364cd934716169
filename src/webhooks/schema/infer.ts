/**
 * Data-structure learning for webhook test captures: every trigger item captured on a test URL is
 * turned into a JSON Schema (draft 2020-12 subset) and merged into the workflow's learned schema,
 * so the structure grows across samples instead of being replaced by the latest one.
 */
import { flattenFields } from './fields.js';
import {
  type Budget,
  carriesExample,
  copyExample,
  countNodes,
  defineOwn,
  isRecord,
  isScalarOnly,
  itemsOf,
  type JsonSchema,
  jsonTypeOf,
  latestExample,
  type LearnedSchema,
  normalizeTypes,
  propertiesOf,
  propertyAt,
  requiredOf,
  scalarExample,
  SCHEMA_DIALECT,
  SCHEMA_LIMITS,
  typesOf,
  typeValue,
} from './json-schema.js';

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
