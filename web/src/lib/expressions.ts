/**
 * Expressions in the browser, for inline errors and previews: JSONata inside `{{ … }}`, with the
 * same rules as the engine (src/engine/expressions.ts): a value that is exactly one `{{ … }}` keeps
 * its type, text around it makes a string; `$` is the step's input, `$trigger` the trigger item,
 * `$steps.<name>` earlier outputs, `$execution` the run, `$vars` the variables (`$secrets` where
 * allowed). The server stays the judge: it checks every expression again on save and evaluates
 * them when the workflow runs.
 */
import jsonata from 'jsonata';

/** A preview must not freeze the page: stop an evaluation after 500 ms or 500 levels of nesting. */
const BUDGET = { timeout: 500, stack: 500 };

import type { ExpressionScope } from '../../../src/shared/expression-scope';
import { toJson } from '../../../src/shared/json-result';
import { type Piece, splitTemplate } from '../../../src/shared/template-syntax';

export { type Piece, splitTemplate };

export function hasExpression(value: string): boolean {
  return value.includes('{{');
}

interface JsonataErrorLike {
  code?: string;
  message?: string;
  position?: number;
}

function describe(err: unknown): string {
  const e = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as JsonataErrorLike;
  if (e.code === 'D1011') return 'The expression nests too deeply (a recursion that never ends?).';
  if (e.code === 'D1012') return 'The expression takes too long (a loop that never ends?).';
  let message = e.message ?? 'The expression failed.';
  if (!/[.!?]$/.test(message)) message += '.';
  // One convention with the server (src/engine/expressions.ts): JSONata's own position, a 1-based
  // character position in the text between `{{` and `}}` (its leading spaces count), and the same words.
  const where = typeof e.position === 'number' && e.position > 0 ? ` (at position ${e.position})` : '';
  return `${message}${where}`;
}

const compiled = new Map<string, jsonata.Expression | Error>();

function compile(source: string): jsonata.Expression {
  let entry = compiled.get(source);
  if (entry === undefined) {
    try {
      if (source.trim() === '') throw new Error('The expression {{ }} is empty.');
      entry = jsonata(source, BUDGET);
    } catch (err) {
      entry = new Error(describe(err));
    }
    if (compiled.size > 500) compiled.clear();
    compiled.set(source, entry);
  }
  if (entry instanceof Error) throw entry;
  return entry;
}

/** The syntax error of a text with `{{ }}` expressions, as a sentence; undefined when it is fine. */
export function templateError(value: string): string | undefined {
  if (!hasExpression(value)) return undefined;
  const split = splitTemplate(value);
  if ('error' in split) return split.error;
  for (const part of split.parts) {
    if (typeof part === 'string') continue;
    try {
      compile(part.source);
    } catch (err) {
      return (err as Error).message;
    }
  }
  return undefined;
}

/** Every syntax error in a configuration value (nested objects and arrays included). */
export function templateErrors(value: unknown, at = ''): { at: string; message: string }[] {
  if (typeof value === 'string') {
    const message = templateError(value);
    return message ? [{ at, message }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => templateErrors(v, `${at}/${i}`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => templateErrors(v, `${at}/${k}`));
  }
  return [];
}

/** What an expression sees: the server's own shape (src/shared/expression-scope.ts), not a copy. */
export type Scope = ExpressionScope;

async function evaluate(source: string, scope: Scope): Promise<unknown> {
  const expression = compile(source);
  try {
    const result = await expression.evaluate(scope.input, {
      trigger: scope.trigger,
      steps: scope.steps,
      execution: scope.execution,
      vars: scope.vars ?? {},
      // Bound only where the step sends secrets (the engine's rule); a preview's are "***".
      ...(scope.secrets ? { secrets: scope.secrets } : {}),
      ...('item' in scope ? { item: scope.item, index: scope.index } : {}),
    });
    return toJson(result);
  } catch (err) {
    throw new Error(describe(err));
  }
}

function toText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/**
 * An expression that found nothing (undefined), and what that does to the value it sits in:
 * - `key`: the whole value of an object key — the key is left out when the value becomes JSON
 *   (an http or respond body, a step's output), as the engine sends it;
 * - `text`: a part of a text — it becomes the empty text;
 * - `value`: the whole configuration value — nothing (set writes null).
 * `at` is the JSON pointer of the value inside the rendered configuration ('' for the value itself).
 */
export interface Missing {
  at: string;
  expression: string;
  effect: 'key' | 'text' | 'value' | 'item';
}

/** Render a configuration value as the engine would; throws Error with a sentence. */
export async function render(value: unknown, scope: Scope, missing?: Missing[], at = ''): Promise<unknown> {
  if (typeof value === 'string') {
    if (!hasExpression(value)) return value;
    const split = splitTemplate(value);
    if ('error' in split) throw new Error(split.error);
    const [only] = split.parts;
    if (split.parts.length === 1 && only !== undefined && typeof only !== 'string') {
      const result = await evaluate(only.source, scope);
      if (result === undefined) missing?.push({ at, expression: only.source.trim(), effect: 'value' });
      return result;
    }
    let out = '';
    for (const part of split.parts) {
      if (typeof part === 'string') {
        out += part;
        continue;
      }
      const result = await evaluate(part.source, scope);
      if (result === undefined) missing?.push({ at, expression: part.source.trim(), effect: 'text' });
      out += toText(result);
    }
    return out;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const [i, item] of value.entries()) {
      const found: Missing[] = [];
      out.push(await render(item, scope, found, `${at}/${i}`));
      // JSON has no undefined item: it is written as null.
      missing?.push(
        ...found.map((m) =>
          m.at === `${at}/${i}` && m.effect === 'value' ? { ...m, effect: 'item' as const } : m,
        ),
      );
    }
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const where = `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      const found: Missing[] = [];
      Object.defineProperty(out, k, {
        value: await render(v, scope, found, where),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      missing?.push(
        ...found.map((m) => (m.at === where && m.effect === 'value' ? { ...m, effect: 'key' as const } : m)),
      );
    }
    return out;
  }
  return value;
}

/**
 * "name — missing: body.param1 has no value", one line per expression that found nothing, saying
 * what becomes of it (docs/expressions.md, "Missing values").
 */
export function describeMissing(missing: Missing[]): string[] {
  return missing.map((m) => {
    const where =
      m.at === ''
        ? ''
        : `${m.at
            .slice(1)
            .split('/')
            .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
            .join(' › ')} — `;
    const what =
      m.effect === 'key'
        ? 'the key is left out'
        : m.effect === 'text'
          ? 'it is left empty in the text'
          : m.effect === 'item'
            ? 'the item is null'
            : 'it gives nothing';
    return `${where}missing: ${m.expression} has no value (${what})`;
  });
}
