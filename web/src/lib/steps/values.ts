/** Form text ↔ JSON values, shared by the step forms (lib/steps/*) and the trigger form (lib/draft.ts). */
import type { FieldProblem } from '../../api';
import type { Step } from '../../types';
import type { Row, TextKey } from './types';

let counter = 0;
export const newKey = () => `k${++counter}`;

export const row = (name = '', value = ''): Row => ({ key: newKey(), name, value });

/** A stored value as form text: strings as they are; other JSON as a typed expression `{{ 42 }}`. */
export function valueToText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return `{{ ${JSON.stringify(value)} }}`;
}

export function rowsFrom(record: unknown): Row[] {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return [];
  return Object.entries(record).map(([k, v]) => row(k, valueToText(v)));
}

export function rowsTo(rows: Row[]): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const r of rows) {
    const name = r.name.trim();
    // defineProperty, as the engine does: assigning "__proto__" would set the prototype and lose
    // the row, so the payload would not even change (and Save would stay disabled).
    if (name !== '')
      Object.defineProperty(out, name, {
        value: r.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The API's JSON parser removes every `__proto__` key (src/http/server.ts, secure-json-parse with
 * protoAction "remove"), so a header or query parameter of that name would vanish on save: say so.
 */
export function reservedRowNames(rows: Row[], at: string, problems: FieldProblem[]): void {
  rows.forEach((r, i) => {
    if (r.name.trim() === '__proto__')
      problems.push({ field: `${at}/${i}`, message: 'uses the reserved name "__proto__"' });
  });
}

function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/**
 * JSON text with `{{ … }}` written where a value goes, unquoted (as the field picker inserts one):
 * each such expression becomes a JSON string holding it, `{"n": {{ $count(x) }}}` →
 * `{"n": "{{ $count(x) }}"}`. A string that is one expression renders to the value itself, of its
 * own type, so the number stays a number. Expressions inside strings are left as they are.
 */
export function quoteExpressions(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' && text[i + 1] === '{') {
      const end = text.indexOf('}}', i + 2);
      if (end !== -1) {
        out += JSON.stringify(text.slice(i, end + 2));
        i = end + 1;
        continue;
      }
    }
    out += c;
  }
  return out;
}

/** Text that reads as JSON meant as JSON: an object or array (`{…}`, `[…]`), not a lone expression. */
export function looksLikeJson(text: string): boolean {
  const t = text.trim();
  return /^[[{]/.test(t) && !/^\{\{[\s\S]*\}\}$/.test(t);
}

/**
 * Body text and body value. The rule: text that is one JSON value (an object, an array, a number,
 * true, false, null, or a "quoted string") is that value; any other text is a string as typed, so
 * `{"id": "{{ body.id }}"}` is an object with an expression inside and `Thanks {{ name }}` is text;
 * an expression in a value's place need not be quoted (quoteExpressions).
 * A stored string that would read back as something else (`42`, `{"a":1}`, a blank one) is shown
 * as a quoted JSON string, so opening and saving a workflow never changes its body.
 */
export function bodyToText(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return textToBody(value) === value ? value : JSON.stringify(value);
  return JSON.stringify(value, null, 2);
}

export function textToBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  const parsed = parseJson(text) ?? (looksLikeJson(text) ? parseJson(quoteExpressions(text)) : undefined);
  // `1e999` parses as Infinity, which JSON cannot carry (it would be sent as null): it stays text.
  if (parsed === undefined || (typeof parsed.value === 'number' && !Number.isFinite(parsed.value)))
    return text;
  return parsed.value;
}

/** A number field that may also hold an expression. */
export function numberish(text: string): number | string | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  return /^\d+$/.test(t) ? Number(t) : t;
}

/** A text field the step cannot run without: copied to the step as typed, and a problem at it when blank. */
export function requiredText<D>(
  d: D,
  step: Step,
  key: TextKey<D>,
  at: string,
  problems: FieldProblem[],
  message: string,
): void {
  const text = d[key] as string;
  step[key] = text;
  if (text.trim() === '') problems.push({ field: `${at}/${key}`, message });
}

/** A text in a card's one-line summary: cut at `max` characters. */
export const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The first line of text that is not blank (a code step's or a statement's summary). */
export const firstLine = (text: string) => clip(text.split('\n').find((l) => l.trim()) ?? '');

/** The summary of a step that tests a condition (`filter`, `if`). */
export const conditionSummary = (condition: string) =>
  condition ? `When ${clip(condition)}` : 'No condition yet';
