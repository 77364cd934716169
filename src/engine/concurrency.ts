/**
 * `settings.concurrency` (SPEC 7d): a key per execution, how many executions of one key may run at
 * once (`limit`), and the newest-wins value. Evaluated once, when the execution is accepted, over
 * its trigger item, and kept on its row (store/queue-keys.ts `claimKeyed` reads only rows): the claim
 * rule is then one statement over the executions table, the same on every process, and an
 * execution keeps the key it was accepted with through retries of its attempts, recovery after a
 * crash and waits. A workflow without the setting pays nothing for it (callers look for
 * `settings.concurrency` before calling anything here).
 */
import { createHash } from 'node:crypto';
import type { ConcurrencySettings } from '../model/workflow.js';
import { compileTemplate, type ExpressionBudget, render, type Template } from './expressions.js';

/** Default `limit`: one execution of a key at a time, in the order accepted. */
export const DEFAULT_CONCURRENCY_LIMIT = 1;

/** Keys longer than this are stored as their sha256 (equal keys stay equal, the index stays small). */
export const MAX_KEY_LENGTH = 512;

/**
 * The key is evaluated on the request's path, before the response: a runaway expression must not
 * hold the event loop (the engine's 1 s is for steps). A key is a path or a concatenation, well
 * under a millisecond; one that takes longer gives no key.
 */
const ACCEPT_BUDGET: ExpressionBudget = { timeoutMs: 50, maxDepth: 200 };

/** What an execution carries (its row's `concurrency_*` and `newest_value` columns). */
export interface ExecutionConcurrency {
  key: string;
  limit: number;
  /** The newest-wins value as a number (`newestNumber`); null when none or not readable. */
  newest: number | null;
}

interface Compiled {
  key: Template;
  newest: Template | undefined;
}

// Compiled once per settings object (a new object on every save; the registry keeps one per version).
const compiled = new WeakMap<ConcurrencySettings, Compiled>();

function compiledOf(settings: ConcurrencySettings): Compiled {
  let c = compiled.get(settings);
  if (!c) {
    c = {
      key: compileTemplate(settings.key, '/settings/concurrency/key', ACCEPT_BUDGET).template,
      newest:
        typeof settings.newestWins === 'string'
          ? compileTemplate(settings.newestWins, '/settings/concurrency/newestWins', ACCEPT_BUDGET).template
          : undefined,
    };
    compiled.set(settings, c);
  }
  return c;
}

/** The expressions' mistakes, as the save's 400 names them (`/settings/concurrency/key` …). */
export function concurrencyErrors(settings: ConcurrencySettings): { field: string; message: string }[] {
  const errors: { field: string; message: string }[] = [];
  for (const e of compileTemplate(settings.key, '/settings/concurrency/key').errors)
    errors.push({ field: e.field, message: e.message });
  if (typeof settings.newestWins === 'string')
    for (const e of compileTemplate(settings.newestWins, '/settings/concurrency/newestWins').errors)
      errors.push({ field: e.field, message: e.message });
  return errors;
}

/**
 * The execution's key, limit and newest-wins value for the trigger `item`, or undefined when the
 * key evaluates to null, nothing or an empty string, or fails (SPEC 7d: then it has no key and runs
 * as any execution does). Never throws.
 */
export async function concurrencyOf(
  settings: ConcurrencySettings,
  item: unknown,
  execution: { id: string; mode: string; workflowId: string },
): Promise<ExecutionConcurrency | undefined> {
  const c = compiledOf(settings);
  const scope = {
    input: item,
    trigger: item,
    steps: {},
    execution: { ...execution, attempt: 1 },
  };
  let key: string | undefined;
  try {
    key = keyText(await render(c.key, scope));
  } catch {
    return undefined;
  }
  if (key === undefined) return undefined;
  let newest: number | null = null;
  if (c.newest) {
    try {
      newest = newestNumber(await render(c.newest, scope));
    } catch {
      newest = null;
    }
  }
  return { key, limit: settings.limit ?? DEFAULT_CONCURRENCY_LIMIT, newest };
}

/** A key's text: strings as they are, other JSON as its text; null, nothing or '' → no key. */
export function keyText(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text === undefined) return undefined;
  return text.length > MAX_KEY_LENGTH ? `sha256:${createHash('sha256').update(text).digest('hex')}` : text;
}

const ISO_DATE =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,](\d+))?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * A newest-wins value as a number that orders as the values do: a number as it is (Stripe's
 * `updated`, a version, a sequence), a numeric string likewise, an ISO-8601 time as epoch
 * milliseconds with its fraction beyond the millisecond kept (a double holds ~0.2 µs at today's
 * times, so microsecond stamps still order). Anything else → null (the execution is never skipped,
 * and raises no mark). Compare like with like: a number and a time are not comparable in meaning.
 */
export function newestNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (text === '') return null;
  if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text)) {
    const n = Number(text);
    return Number.isFinite(n) ? n : null;
  }
  const m = ISO_DATE.exec(text);
  if (!m) return null;
  const fraction = m[1];
  // Date.parse reads milliseconds; the digits after them are added back as a fraction of one.
  const ms = Date.parse(
    fraction && fraction.length > 3
      ? text.replace(/[.,]\d+/, `.${fraction.slice(0, 3)}`)
      : text.replace(',', '.'),
  );
  if (Number.isNaN(ms)) return null;
  const extra = fraction && fraction.length > 3 ? Number(`0.${fraction.slice(3)}`) : 0;
  return ms + extra;
}
