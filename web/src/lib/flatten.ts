import type { TriggerItem } from '../types';

/** A JSON value as rows of leaf paths: `body.param1 = "a"`, the way the request table shows it. */

export interface LeafRow {
  /** Display path (`body.items[0].name`). */
  path: string;
  /** JSONata expression reaching it (`body.items[0].name`, `` headers.`content-type` ``). */
  expression: string;
  value: unknown;
}

const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** JSONata words that cannot be bare path steps. */
const RESERVED = new Set(['and', 'or', 'in', 'true', 'false', 'null', 'function']);

/** One step of a JSONata path for a key. */
export function keyStep(key: string): string {
  if (PLAIN.test(key) && !RESERVED.has(key)) return key;
  if (!key.includes('`')) return `\`${key}\``;
  return `$lookup($, ${JSON.stringify(key)})`;
}

export function joinExpression(base: string, key: string): string {
  const step = keyStep(key);
  if (step.startsWith('$lookup(')) return `$lookup(${base === '' ? '$' : base}, ${JSON.stringify(key)})`;
  return base === '' ? step : `${base}.${step}`;
}

/**
 * A key as a display path step: as it is, except the two that would read as something else, the
 * empty key (invisible) and `$` (the whole item), which show as their JSONata names `` and `$`.
 */
function displayStep(key: string): string {
  return key === '' || key === '$' ? `\`${key}\`` : key;
}

/**
 * `containers`: list each non-empty object and array too, before what it holds (the field picker
 * offers them: a forEach needs a list, a body may take a whole object); the request table lists
 * leaves only.
 */
export function flattenValue(value: unknown, maxRows = 500, { containers = false } = {}): LeafRow[] {
  const rows: LeafRow[] = [];
  // The top is told by depth, not by an empty path: the key "" is a field like any other.
  const walk = (v: unknown, path: string, expr: string, depth: number) => {
    if (rows.length >= maxRows) return;
    if (v !== null && typeof v === 'object' && depth < 20) {
      const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
      if (entries.length === 0) {
        if (depth > 0) rows.push({ path, expression: expr, value: v });
        return;
      }
      if (containers && depth > 0) rows.push({ path, expression: expr, value: v });
      for (const [k, child] of entries) {
        if (Array.isArray(v)) walk(child, `${path}[${k}]`, `${expr === '' ? '$' : expr}[${k}]`, depth + 1);
        else {
          const childPath = depth === 0 ? displayStep(k) : `${path}.${displayStep(k)}`;
          walk(child, childPath, joinExpression(expr, k), depth + 1);
        }
      }
      return;
    }
    rows.push({ path: depth === 0 ? '$' : path, expression: depth === 0 ? '$' : expr, value: v });
  };
  walk(value, '', '', 0);
  return rows;
}

/** The parts of a trigger item a table lists, data first; empty parts left out. */
export function requestFields(item: TriggerItem): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ['body', 'query', 'params', 'headers'] as const) {
    const value = item[key];
    const empty =
      value === undefined || (typeof value === 'object' && value !== null && Object.keys(value).length === 0);
    if (!empty) out[key] = value;
  }
  if (Array.isArray(item.files) && item.files.length > 0) out.files = item.files;
  return out;
}
