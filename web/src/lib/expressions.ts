/**
 * Expressions in the browser, for inline errors and previews: JSONata inside `{{ … }}`, with the
 * same rules as the engine (src/engine/expressions.ts): a value that is exactly one `{{ … }}` keeps
 * its type, text around it makes a string; `$` is the step's input, `$trigger` the trigger item,
 * `$steps.<name>` earlier outputs, `$execution` the run. The server stays the judge: it checks
 * every expression again on save and evaluates them when the workflow runs.
 */
import jsonata from 'jsonata';

/** A preview must not freeze the page: stop an evaluation after 500 ms or 500 levels of nesting. */
const BUDGET = { timeout: 500, stack: 500 };

import { toJson } from '../../../src/engine/json-result';
import { type Piece, splitTemplate } from '../../../src/engine/template-syntax';

export { type Piece, splitTemplate };

export function hasExpression(value: string): boolean {
  return value.includes('{{');
}

interface JsonataErrorLike {
  code?: string;
  message?: string;
  position?: number;
}

function describe(err: unknown, source: string): string {
  const e = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as JsonataErrorLike;
  if (e.code === 'D1011') return 'The expression nests too deeply (a recursion that never ends?).';
  if (e.code === 'D1012') return 'The expression takes too long (a loop that never ends?).';
  let message = e.message ?? 'The expression failed.';
  if (!/[.!?]$/.test(message)) message += '.';
  // JSONata counts from the first character after `{{`; the message quotes the expression without
  // its surrounding spaces, so count from there (the end of the text when JSONata points past it).
  const text = source.trim();
  const leading = source.length - source.trimStart().length;
  const where =
    typeof e.position === 'number' && e.position > 0
      ? ` (at position ${Math.min(Math.max(e.position - leading, 1), text.length)} of "${text}")`
      : '';
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
      entry = new Error(describe(err, source));
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

export interface Scope {
  input: unknown;
  trigger: unknown;
  steps: Record<string, unknown>;
  execution: { id: string; mode: string; workflowId: string; attempt: number };
}

async function evaluate(source: string, scope: Scope): Promise<unknown> {
  const expression = compile(source);
  try {
    const result = await expression.evaluate(scope.input, {
      trigger: scope.trigger,
      steps: scope.steps,
      execution: scope.execution,
    });
    return toJson(result);
  } catch (err) {
    throw new Error(describe(err, source));
  }
}

function toText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** Render a configuration value as the engine would; throws Error with a sentence. */
export async function render(value: unknown, scope: Scope): Promise<unknown> {
  if (typeof value === 'string') {
    if (!hasExpression(value)) return value;
    const split = splitTemplate(value);
    if ('error' in split) throw new Error(split.error);
    const [only] = split.parts;
    if (split.parts.length === 1 && only !== undefined && typeof only !== 'string')
      return evaluate(only.source, scope);
    let out = '';
    for (const part of split.parts)
      out += typeof part === 'string' ? part : toText(await evaluate(part.source, scope));
    return out;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) out.push(await render(item, scope));
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, k, {
        value: await render(v, scope),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}
