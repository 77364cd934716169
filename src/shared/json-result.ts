/**
 * What an expression's result becomes in a step's configuration: plain JSON. Dependency-free, so
 * the web UI's preview (web/src/lib/expressions.ts) gives the same values as the engine.
 */

/** jsonata.js isFunction, for objects: what JSONata treats as a function (its own and lambdas), not as data. */
export function isJsonataFunction(value: object): boolean {
  const v = value as { _jsonata_function?: unknown; _jsonata_lambda?: unknown };
  return v._jsonata_function === true || v._jsonata_lambda === true;
}

/** Leaves functions out wherever they are, like JSON does with JavaScript functions. */
function withoutFunctions(_key: string, value: unknown): unknown {
  return typeof value === 'object' && value !== null && isJsonataFunction(value) ? undefined : value;
}

/**
 * The result as JSON would give it back: undefined for nothing or a function (`{{ $sum }}`,
 * `{{ function($x) { $x } }}`; JSONata's functions are objects, some with cycles), non-finite
 * numbers as null, JSONata's sequences as plain arrays.
 */
export function toJson(value: unknown): unknown {
  if (value === undefined || typeof value === 'function') return undefined;
  // Primitives as JSON would give them back, without the round trip (most results are these).
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : null;
  const text = JSON.stringify(value, withoutFunctions);
  return text === undefined ? undefined : JSON.parse(text);
}
