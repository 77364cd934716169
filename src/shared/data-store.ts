/**
 * The data store's limits (SPEC 7f), read by the `store` step, the API and the Data page alike:
 * keys of 1 to 512 characters, values (JSON) up to 256 KiB, expiries up to a year ahead.
 */
export const DATA_KEY_MAX_CHARS = 512;
export const DATA_VALUE_MAX_BYTES = 256 * 1024;
export const DATA_TTL_MAX_SECONDS = 366 * 86_400;
export const DATA_SCOPES = ['workflow', 'global'] as const;
export type DataScopeName = (typeof DATA_SCOPES)[number];

/** Why `key` cannot be a key, or undefined. Counted in code points, as the database does. */
export function dataKeyProblem(key: unknown): string | undefined {
  if (typeof key !== 'string') return `must be a text (it is ${key === null ? 'null' : typeof key})`;
  if (key.length === 0) return 'must not be empty';
  const chars = [...key].length;
  if (chars > DATA_KEY_MAX_CHARS)
    return `has ${chars} characters; a key may have at most ${DATA_KEY_MAX_CHARS}`;
  return undefined;
}

/** The value's JSON, or why it cannot be stored (not JSON, or past DATA_VALUE_MAX_BYTES). */
export function dataValueJson(value: unknown): { json: string } | { problem: string } {
  if (value === undefined) return { problem: 'is missing (a value is required)' };
  const json = JSON.stringify(value);
  if (json === undefined) return { problem: 'is not a JSON value' };
  // UTF-8 bytes without encoding the text: at most 3 per UTF-16 unit, so most values are under at once.
  if (json.length * 3 > DATA_VALUE_MAX_BYTES) {
    const bytes = new TextEncoder().encode(json).length;
    if (bytes > DATA_VALUE_MAX_BYTES)
      return {
        problem: `is ${bytes} bytes as JSON; a value may be at most ${DATA_VALUE_MAX_BYTES} bytes (256 KiB)`,
      };
  }
  return { json };
}
