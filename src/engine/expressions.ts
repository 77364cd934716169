/**
 * Expressions (SPEC 7): JSONata inside `{{ … }}`, in any string value of a step's configuration.
 * A value that is exactly one `{{ … }}` keeps the JSON type of its result; text around it makes
 * a string. A configuration is compiled once into a Template (per workflow version: run.ts caches
 * it) and rendered once per execution.
 *
 * Budgets. Evaluation runs on the main thread. JSONata 2.2 checks two guardrails on entry to every
 * node it evaluates: `stack` (depth of nested evaluation, which is what a runaway recursion grows)
 * and `timeout` (wall time since the evaluation began, which is what `[1..10000000].($)` spends).
 * Both are per evaluation, so one compiled expression is safe to share between concurrent
 * executions. JSONata's evaluate() is async but only awaits microtasks, which never let the event
 * loop serve I/O; the `__evaluate_entry` hook (the documented timebox hook) therefore yields a
 * macrotask turn every YIELD_EVERY_MS of an evaluation's own running time, so a runaway
 * expression delays HTTP requests by milliseconds until its budget stops it, not by the budget.
 * What the hooks cannot stop is one built-in call that is slow by itself (a regular expression
 * that backtracks catastrophically, `$sort` of a huge array); the executor runs executions on a
 * thread it can terminate for that (queue/engine-runner.ts).
 *
 * Deadline. An evaluation also stops at its scope's `until` (the execution's budget, or the short
 * slice a workflow run before its commit gets: run.ts), checked by the same hook with the same
 * clock read, and throws DeadlineReached (not an expression's mistake: run.ts says which budget).
 *
 * Fast path. Most expressions are a path, a comparison, a concatenation or a string function
 * (`body.param1`, `customer = "a"`, `$uppercase(body.param2)`), for which JSONata's general
 * evaluator (a promise per node) costs several µs each. fast-expressions.ts evaluates those
 * shapes directly, on the values whose JSONata result it reproduces exactly, and declines
 * everything else to JSONata; a template whose expressions are all answered that way renders
 * without a promise per node.
 */
import jsonata from 'jsonata';
import { compileFast, DECLINE, type FastEvaluator } from './fast-expressions.js';
import type { ExpressionScope } from '../shared/expression-scope.js';
import { toJson } from '../shared/json-result.js';
import { splitTemplate } from '../shared/template-syntax.js';
import type { MaybePromise } from '../shared/maybe-promise.js';

export { splitTemplate };

export interface ExpressionBudget {
  /** Wall time one evaluation may take. */
  timeoutMs: number;
  /** Nesting depth of evaluation (about 3 levels per user-function call). */
  maxDepth: number;
}

/**
 * 1 s is far more than a data-shaping expression needs (typical ones take well under 1 ms) and
 * short enough that a runaway one fails fast. A depth of 1000 allows ~300 levels of recursion.
 */
export const DEFAULT_BUDGET: ExpressionBudget = { timeoutMs: 1_000, maxDepth: 1_000 };

/** Longest an evaluation runs before it lets the event loop serve others. */
const YIELD_EVERY_MS = 10;

/** What an expression sees (src/shared/expression-scope.ts), and when its evaluation must stop. */
export interface Scope extends ExpressionScope {
  /** Epoch ms at which evaluation stops with DeadlineReached (none: only the per-evaluation budget). */
  until?: number;
}

/** An evaluation reached its scope's `until`: run.ts turns it into the budget that ran out. */
export class DeadlineReached extends Error {
  constructor() {
    super('The evaluation reached its deadline.');
    this.name = 'DeadlineReached';
  }
}

/** An expression's mistake, located: the field (a JSON pointer into the step) and a position. */
export class ExpressionError extends Error {
  readonly field: string;
  /** The JSONata text between `{{` and `}}`. */
  readonly expression: string;
  /** 1-based character position in `expression` (JSONata's), when known. */
  readonly position: number | undefined;
  /** JSONata's error code (S0201, D1011 …) or `budget_depth` / `budget_time`. */
  readonly code: string | undefined;

  constructor(
    message: string,
    opts: { field: string; expression: string; position?: number | undefined; code?: string | undefined },
  ) {
    super(message);
    this.name = 'ExpressionError';
    this.field = opts.field;
    this.expression = opts.expression;
    this.position = opts.position;
    this.code = opts.code;
  }
}

export interface CompiledExpression {
  source: string;
  field: string;
  expression: jsonata.Expression;
  /** The fast path for this expression, when it is a shape fast-expressions.ts knows. */
  fast: FastEvaluator | undefined;
  /** It may spend unbounded time inside one call, where no deadline is checked (see `uninterruptible`). */
  uninterruptible: boolean;
  /** It names `$vars` or `$secrets` (the run needs the variables: see `usesVariables`). */
  variables: boolean;
  /** It names `$secrets`. */
  secrets: boolean;
  /** `$secrets` is bound when it is evaluated: its field is one its step type allows secrets in. */
  secretsAllowed: boolean;
}

/** A configuration value, ready to render. Literal subtrees are kept as they are. */
export type Template =
  | { kind: 'literal'; value: unknown }
  | { kind: 'expression'; expr: CompiledExpression }
  | { kind: 'text'; parts: (string | CompiledExpression)[] }
  | { kind: 'array'; items: Template[] }
  | { kind: 'object'; entries: [string, Template][] };

export interface CompileResult {
  template: Template;
  errors: ExpressionError[];
  /** The fields whose expressions name `$secrets` where `allowSecrets` says no (refused on save). */
  secretsMisused: string[];
}

/** Says whether an expression at this field (a JSON pointer) may use `$secrets`. */
export type SecretsAllowed = (field: string) => boolean;

const NO_SECRETS: SecretsAllowed = () => false;

/**
 * Compile every `{{ … }}` in a JSON value; `field` is the JSON pointer of `value`. `allowSecrets`:
 * where `$secrets` may be used (nowhere by default); elsewhere it is not bound when evaluated.
 */
export function compileTemplate(
  value: unknown,
  field = '',
  budget: ExpressionBudget = DEFAULT_BUDGET,
  allowSecrets: SecretsAllowed = NO_SECRETS,
): CompileResult {
  const c: Compiling = { budget, errors: [], allowSecrets, secretsMisused: [] };
  const template = compileValue(value, field, c);
  return { template, errors: c.errors, secretsMisused: c.secretsMisused };
}

interface Compiling {
  budget: ExpressionBudget;
  errors: ExpressionError[];
  allowSecrets: SecretsAllowed;
  secretsMisused: string[];
}

function compileValue(value: unknown, field: string, c: Compiling): Template {
  if (typeof value === 'string') return compileString(value, field, c);
  if (Array.isArray(value)) {
    const items = value.map((v, i) => compileValue(v, `${field}/${i}`, c));
    return items.every((t) => t.kind === 'literal') ? { kind: 'literal', value } : { kind: 'array', items };
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(
      ([k, v]) => [k, compileValue(v, `${field}/${pointerEscape(k)}`, c)] as [string, Template],
    );
    return entries.every(([, t]) => t.kind === 'literal')
      ? { kind: 'literal', value }
      : { kind: 'object', entries };
  }
  return { kind: 'literal', value };
}

function compileString(value: string, field: string, c: Compiling): Template {
  const { budget, errors } = c;
  if (!value.includes('{{')) return { kind: 'literal', value };
  const split = splitTemplate(value);
  if ('error' in split) {
    errors.push(new ExpressionError(split.error, { field, expression: value }));
    return { kind: 'literal', value };
  }
  const parts: (string | CompiledExpression)[] = [];
  let failed = false;
  for (const part of split.parts) {
    if (typeof part === 'string') {
      parts.push(part);
      continue;
    }
    const compiled = compileExpression(part.source, field, budget);
    if (compiled instanceof ExpressionError) {
      errors.push(compiled);
      failed = true;
    } else {
      if (compiled.secrets) {
        compiled.secretsAllowed = c.allowSecrets(field);
        if (!compiled.secretsAllowed && !c.secretsMisused.includes(field)) c.secretsMisused.push(field);
      }
      parts.push(compiled);
    }
  }
  if (failed) return { kind: 'literal', value };
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only !== undefined && typeof only !== 'string') return { kind: 'expression', expr: only };
  return { kind: 'text', parts };
}

function compileExpression(
  source: string,
  field: string,
  budget: ExpressionBudget,
): CompiledExpression | ExpressionError {
  if (source.trim() === '')
    return new ExpressionError('The expression {{ }} is empty.', { field, expression: source });
  try {
    const expression = jsonata(source, { timeout: budget.timeoutMs, stack: budget.maxDepth });
    expression.assign(EVALUATE_ENTRY as unknown as string, yieldNow);
    const ast = expression.ast();
    const names = variablesNamed(ast);
    return {
      source,
      field,
      expression,
      fast: compileFast(ast, budget.maxDepth),
      uninterruptible: uninterruptible(ast),
      variables: names.vars || names.secrets,
      secrets: names.secrets,
      secretsAllowed: false,
    };
  } catch (err) {
    return toExpressionError(err, field, source, budget);
  }
}

/**
 * Whether an expression can spend unbounded time inside one built-in call, where neither its
 * budget nor a deadline is checked: a regular expression (`/(a+)+$/` backtracks for hours on 40
 * characters), or `$eval` (text that may hold one). Such expressions only run where a stuck call
 * can be stopped: the executor's engine thread (queue/engine-runner.ts), never before a commit.
 * (Other slow built-ins, `$sort` and the like, are bounded by the size of their data.)
 */
function uninterruptible(node: unknown): boolean {
  if (typeof node !== 'object' || node === null) return false;
  if (Array.isArray(node)) return node.some(uninterruptible);
  const n = node as { type?: unknown; value?: unknown };
  if (n.type === 'regex') return true;
  if (n.type === 'variable' && n.value === 'eval') return true;
  for (const [key, child] of Object.entries(node))
    if (key !== 'value' && typeof child === 'object' && uninterruptible(child)) return true;
  return false;
}

/**
 * Whether an expression names `$vars` or `$secrets` (as a variable: the same name inside a string
 * is text). `$eval` may name them in text it builds: it counts as naming both, so a run that
 * evaluates one gets its variables, and a field where secrets are not allowed refuses it.
 */
function variablesNamed(
  node: unknown,
  found = { vars: false, secrets: false },
): { vars: boolean; secrets: boolean } {
  if (typeof node !== 'object' || node === null) return found;
  if (Array.isArray(node)) {
    for (const n of node) variablesNamed(n, found);
    return found;
  }
  const n = node as { type?: unknown; value?: unknown };
  if (n.type === 'variable' && n.value === 'vars') found.vars = true;
  if (n.type === 'variable' && n.value === 'secrets') found.secrets = true;
  if (n.type === 'variable' && n.value === 'eval') found.vars = found.secrets = true;
  for (const [key, child] of Object.entries(node))
    if (key !== 'value' && typeof child === 'object') variablesNamed(child, found);
  return found;
}

/** Whether any expression of a template names `$vars` or `$secrets`. */
export function usesVariables(template: Template): boolean {
  switch (template.kind) {
    case 'literal':
      return false;
    case 'expression':
      return template.expr.variables;
    case 'text':
      return template.parts.some((p) => typeof p !== 'string' && p.variables);
    case 'array':
      return template.items.some(usesVariables);
    case 'object':
      return template.entries.some(([, t]) => usesVariables(t));
  }
}

/** Whether any expression of a template is `uninterruptible`. */
export function hasUninterruptible(template: Template): boolean {
  switch (template.kind) {
    case 'literal':
      return false;
    case 'expression':
      return template.expr.uninterruptible;
    case 'text':
      return template.parts.some((p) => typeof p !== 'string' && p.uninterruptible);
    case 'array':
      return template.items.some(hasUninterruptible);
    case 'object':
      return template.entries.some(([, t]) => hasUninterruptible(t));
  }
}

/** `render`, always as a promise. */
export async function renderTemplate(template: Template, scope: Scope): Promise<unknown> {
  return render(template, scope);
}

/**
 * Renders a template against a scope: the value itself when every expression takes the fast path
 * (the common case), a promise of it when some expression needs JSONata's evaluator (rendered
 * values are JSON, never promises): then again, node by node, each expression on its own. Fails
 * with ExpressionError (thrown on the fast path, rejected on JSONata's).
 */
export function render(template: Template, scope: Scope): MaybePromise<unknown> {
  const fast = renderFast(template, scope);
  return fast === DECLINE ? renderSlow(template, scope) : fast;
}

function renderFast(template: Template, scope: Scope): unknown {
  switch (template.kind) {
    case 'literal':
      return copyLiteral(template.value);
    case 'expression':
      return evaluateFast(template.expr, scope);
    case 'text': {
      let out = '';
      for (const part of template.parts) {
        if (typeof part === 'string') {
          out += part;
          continue;
        }
        const value = evaluateFast(part, scope);
        if (value === DECLINE) return DECLINE;
        out += toText(value);
      }
      return out;
    }
    case 'array': {
      const out: unknown[] = [];
      for (const item of template.items) {
        const value = renderFast(item, scope);
        if (value === DECLINE) return DECLINE;
        out.push(value);
      }
      return out;
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, value] of template.entries) {
        const rendered = renderFast(value, scope);
        if (rendered === DECLINE) return DECLINE;
        defineEntry(out, key, rendered);
      }
      return out;
    }
  }
}

async function renderSlow(template: Template, scope: Scope): Promise<unknown> {
  switch (template.kind) {
    case 'literal':
      return copyLiteral(template.value);
    case 'expression':
      return evaluate(template.expr, scope);
    case 'text': {
      let out = '';
      for (const part of template.parts)
        out += typeof part === 'string' ? part : toText(await evaluate(part, scope));
      return out;
    }
    case 'array': {
      const out: unknown[] = [];
      for (const item of template.items) out.push(await renderSlow(item, scope));
      return out;
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, value] of template.entries) defineEntry(out, key, await renderSlow(value, scope));
      return out;
    }
  }
}

/** A copy: the template is cached and shared by every execution of this workflow version. */
function copyLiteral(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? structuredClone(value) : value;
}

/**
 * Kept even when undefined (an expression that found nothing), so a step can tell "empty" from
 * "not configured". defineProperty: a key like "__proto__" is data, not the prototype.
 */
export function defineEntry(out: Record<string, unknown>, key: string, value: unknown): void {
  // Only `__proto__` is an accessor on a plain object: every other key is a plain store (defineProperty
  // is a runtime call, ~10× slower).
  if (key === '__proto__')
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** Evaluate one expression; the result is plain JSON (JSONata sequences and functions removed). */
export async function evaluate(expr: CompiledExpression, scope: Scope): Promise<unknown> {
  const fast = evaluateFast(expr, scope);
  if (fast !== DECLINE) return fast;
  return evaluateJsonata(expr, scope);
}

/** The fast path's result as plain JSON, or DECLINE (no fast path, or it declined). */
function evaluateFast(expr: CompiledExpression, scope: Scope): unknown {
  if (expr.fast === undefined) return DECLINE;
  let result: unknown;
  try {
    result = expr.fast(scope);
  } catch {
    // Not expected (the fast path declines what JSONata would throw on); JSONata will say.
    return DECLINE;
  }
  return result === DECLINE ? DECLINE : toJson(result);
}

/** JSONata's own evaluation, with its budgets and errors. */
async function evaluateJsonata(expr: CompiledExpression, scope: Scope): Promise<unknown> {
  let result: unknown;
  try {
    result = await expr.expression.evaluate(scope.input, {
      trigger: scope.trigger,
      steps: scope.steps,
      execution: scope.execution,
      item: scope.item,
      index: scope.index,
      vars: scope.vars ?? {},
      // Only where the step type allows secrets: elsewhere `$secrets` is undefined, even via `$eval`.
      ...(expr.secretsAllowed ? { secrets: scope.secrets ?? {} } : {}),
      ...(scope.until === undefined ? {} : { [UNTIL_BINDING]: scope.until }),
    });
  } catch (err) {
    if (reachedDeadline(err)) throw new DeadlineReached();
    throw toExpressionError(err, expr.field, expr.source, undefined);
  }
  return toJson(result);
}

/** DeadlineReached, also as the cause JSONata's `$eval` wraps an error in (D3121, `.error`). */
function reachedDeadline(err: unknown): boolean {
  for (
    let e = err, i = 0;
    typeof e === 'object' && e !== null && i < 100;
    e = (e as { error?: unknown }).error, i++
  )
    if (e instanceof DeadlineReached) return true;
  return false;
}

function toText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

const EVALUATE_ENTRY = Symbol.for('jsonata.__evaluate_entry');

/**
 * Per evaluation, on JSONata's `environment.base` (the evaluation's own frame): when it last let
 * the event loop run. A property of the frame, not a WeakMap keyed by it: a young key in an old
 * WeakMap survives scavenges until a full GC, and every frame (with the input, $trigger and
 * $steps it binds) was promoted to the old generation: ~6 KB per execution, so the heap of a
 * process running 6 000 three-step executions/s grew 75 MB between full collections.
 */
const LAST_TURN = Symbol('hookflow.lastTurn');
/** On the same frame: the evaluation's deadline (Infinity when its scope has none). */
const UNTIL = Symbol('hookflow.until');

/**
 * The binding that carries `Scope.until` into an evaluation (JSONata binds only string keys). A
 * name no expression can write (`:` ends a variable name), read once per evaluation by the hook.
 */
const UNTIL_BINDING = 'hookflow:until';

/** Node evaluations since the clock was last read (all evaluations together). */
let entries = 0;

function yieldNow(
  _expr: unknown,
  _input: unknown,
  environment: { base?: { [LAST_TURN]?: number; [UNTIL]?: number }; lookup(name: string): unknown },
): Promise<void> | undefined {
  const base = environment.base;
  if (!base) return undefined;
  // The hook runs for every node JSONata evaluates: a clock read and a WeakMap lookup each time
  // were 1.6 % of the process at 6 000 three-step executions/s. Every 16th node is as good for
  // slices of 10 ms (one node takes microseconds; a slow built-in is not interruptible anyway).
  if ((++entries & 15) !== 0) return undefined;
  const now = Date.now();
  const last = base[LAST_TURN];
  if (last === undefined) {
    base[LAST_TURN] = now;
    const until = environment.lookup(UNTIL_BINDING);
    base[UNTIL] = typeof until === 'number' ? until : Number.POSITIVE_INFINITY;
  }
  if (now > base[UNTIL]!) throw new DeadlineReached();
  if (last === undefined || now - last < YIELD_EVERY_MS) return undefined;
  return new Promise((resolve) =>
    setImmediate(() => {
      base[LAST_TURN] = Date.now();
      resolve();
    }),
  );
}

interface JsonataErrorLike {
  code?: string;
  message?: string;
  position?: number;
  token?: string;
  value?: unknown;
}

function toExpressionError(
  err: unknown,
  field: string,
  source: string,
  budget: ExpressionBudget | undefined,
): ExpressionError {
  const e = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as JsonataErrorLike;
  let message: string;
  let code = e.code;
  if (e.code === 'D1011') {
    code = 'budget_depth';
    message = `The expression was stopped: it nested deeper than its budget of ${e.value ?? budget?.maxDepth} levels (a recursion that never ends?).`;
  } else if (e.code === 'D1012') {
    code = 'budget_time';
    message = `The expression was stopped: it ran longer than its budget of ${e.value ?? budget?.timeoutMs} ms (a loop that never ends, or too much work?).`;
  } else {
    message = e.message ?? 'The expression failed.';
    if (!/[.!?]$/.test(message)) message += '.';
  }
  const position = typeof e.position === 'number' && e.position > 0 ? e.position : undefined;
  const where = position === undefined ? '' : ` (at position ${position})`;
  return new ExpressionError(`${message}${where}`, { field, expression: source, position, code });
}

/** RFC 6901 escaping of one JSON pointer segment. */
export function pointerEscape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
