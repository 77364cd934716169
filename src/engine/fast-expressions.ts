/**
 * A fast path for the simplest JSONata expressions, the ones most `{{ … }}` are: `body.param1`,
 * `$uppercase(body.param2)`, `$trigger.path`, `customer = "a"`, `customer & "-" & code`. JSONata's
 * evaluator is general (async at every node, sequences, frames) and spends several µs on each of
 * these; interpreting the few node shapes directly takes a fraction of that.
 *
 * Parsing stays JSONata's: compileFast() reads the AST of an expression JSONata has compiled and
 * accepts only these shapes, with exactly the keys listed (anything else, e.g. a predicate, a
 * `[]`, a focus or a group, is a key we do not know, and the expression is not ours):
 *   - literals: strings, numbers, true, false, null;
 *   - `$` and `$$` (the input), `$trigger`, `$steps`, `$execution`;
 *   - paths of plain names, from the input or from one of those variables;
 *   - `&`, `=`, `!=`, `<`, `<=`, `>`, `>=`, `+`, `-`, `*`, `/`, `%`, `and`, `or`, unary `-`,
 *     `? :`, and `( … ; … )` blocks of these;
 *   - one-argument calls of `$uppercase`, `$lowercase`, `$trim`, `$length`, `$string`, `$number`,
 *     `$boolean`, `$not`, `$exists`.
 * Each function here follows the JSONata 2.2 function it replaces (jsonata.js, named in comments).
 *
 * Values are checked at run time: whenever a value is one whose JSONata semantics are not
 * reproduced here (an array in the middle of a path, which JSONata maps over; an object where a
 * string is wanted; anything JSONata would throw on), the evaluator returns DECLINE and the caller
 * evaluates the expression with JSONata, which then gives its result or its own error. Declining
 * is always allowed; answering differently from JSONata never is (fast-expressions.test.ts checks
 * this against the installed JSONata on generated data, so an upgrade that changes any of these
 * semantics fails it).
 *
 * Budgets: these expressions have no loops, so they cannot run away. JSONata's depth budget is
 * checked statically (an expression nested deeper than the budget is left to JSONata, which stops
 * it as before). The time budget is not checked: an evaluation here touches each node once.
 */
import type { ExpressionScope as Scope } from '../shared/expression-scope.js';
import { isJsonataFunction } from '../shared/json-result.js';

/** Returned by a fast evaluator that cannot vouch for JSONata's answer. */
export const DECLINE: unique symbol = Symbol('hookflow.decline');

/** Evaluates one expression against a scope: JSONata's result, or DECLINE. */
export type FastEvaluator = (scope: Scope) => unknown;

/** A JSONata AST node, as `jsonata(src).ast()` gives it. */
type Node = Record<string, unknown>;

interface Built {
  run: FastEvaluator;
  /** How deep JSONata's `evaluate` recursion goes for this node (its depth budget counts this). */
  depth: number;
}

/**
 * A fast evaluator for the expression whose JSONata AST is `ast`, or undefined when the
 * expression is not one of the shapes above. `maxDepth` is the JSONata `stack` option it runs with.
 */
export function compileFast(ast: unknown, maxDepth: number): FastEvaluator | undefined {
  const built = build(ast);
  if (built === undefined) return undefined;
  // JSONata throws when its depth exceeds `stack` (and checks only a positive one).
  if (maxDepth > 0 && built.depth > maxDepth) return undefined;
  return built.run;
}

function build(ast: unknown): Built | undefined {
  if (!isNode(ast)) return undefined;
  switch (ast.type) {
    case 'string':
      return typeof ast.value === 'string' && hasOnly(ast, LEAF) ? constant(ast.value) : undefined;
    case 'number':
      return typeof ast.value === 'number' && hasOnly(ast, LEAF) ? constant(ast.value) : undefined;
    case 'value':
      return (ast.value === true || ast.value === false || ast.value === null) && hasOnly(ast, LEAF)
        ? constant(ast.value)
        : undefined;
    case 'variable': {
      const read = hasOnly(ast, LEAF) ? variable(ast.value) : undefined;
      return read && { run: (scope) => whole(read(scope)), depth: 1 };
    }
    case 'path':
      return hasOnly(ast, PATH) ? buildPath(ast.steps) : undefined;
    case 'binary':
      return hasOnly(ast, BINARY) ? buildBinary(ast) : undefined;
    case 'unary':
      return ast.value === '-' && hasOnly(ast, UNARY) ? buildNegation(ast.expression) : undefined;
    case 'condition':
      return hasOnly(ast, CONDITION) ? buildCondition(ast) : undefined;
    case 'block':
      return hasOnly(ast, BLOCK) ? buildBlock(ast.expressions) : undefined;
    case 'function':
      return ast.value === '(' && ast.name === undefined && hasOnly(ast, FUNCTION)
        ? buildCall(ast)
        : undefined;
    default:
      return undefined;
  }
}

// The keys each accepted node may have: any other (predicate, stages, keepArray, group, focus,
// index, tuple, ancestor …) changes JSONata's semantics.
const LEAF = ['type', 'value', 'position'];
const PATH = ['type', 'steps'];
const BINARY = ['type', 'value', 'position', 'lhs', 'rhs'];
const UNARY = ['type', 'value', 'position', 'expression'];
const CONDITION = ['type', 'position', 'condition', 'then', 'else'];
const BLOCK = ['type', 'position', 'expressions'];
// The parser sets `name` on every call node (undefined, for a call of a named function).
const FUNCTION = ['type', 'name', 'value', 'position', 'arguments', 'procedure'];

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasOnly(node: Node, keys: readonly string[]): boolean {
  for (const key of Object.keys(node)) if (!keys.includes(key)) return false;
  return true;
}

function constant(value: unknown): Built {
  return { run: () => value, depth: 1 };
}

const EMPTY_VARS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** Reads a variable JSONata binds: `$`/`$$` the input, `$trigger`, `$steps`, `$execution`, `$item`, `$index`. */
function variable(name: unknown): ((scope: Scope) => unknown) | undefined {
  switch (name) {
    case '': // `$`: the context, which at the top level is the input (an array input unwrapped)
    case '$': // `$$`: the root, bound to the input as given
      return (scope) => scope.input;
    case 'trigger':
      return (scope) => scope.trigger;
    case 'steps':
      return (scope) => scope.steps;
    case 'execution':
      return (scope) => scope.execution;
    case 'item':
      return (scope) => scope.item;
    case 'index':
      return (scope) => scope.index;
    case 'vars':
      return (scope) => scope.vars ?? EMPTY_VARS;
    // `secrets` is left to JSONata, which binds it only where the field allows (expressions.ts).
    default:
      return undefined;
  }
}

/**
 * A value as a whole expression's result: JSONata returns it as it is, unless it is one of its
 * own sequences (which it unwraps) or a function (not data) — an object it takes for one included
 * (`{"_jsonata_function": true}`: passed to `$exists`, JSONata throws; found by the property test).
 */
function whole(value: unknown): unknown {
  if (typeof value === 'function') return DECLINE;
  if (typeof value === 'object' && value !== null && isJsonataFunction(value)) return DECLINE;
  if (Array.isArray(value) && (value as { sequence?: unknown }).sequence === true) return DECLINE;
  return value;
}

/**
 * `a.b.c`, `$trigger.a.b`. JSONata (evaluatePath, evaluateStep, fn.lookup) maps each step over
 * arrays and flattens the results: declined. On an object, a step is its own property (or
 * nothing); on a string, number, boolean or null it is nothing, and a path stops at nothing.
 * The last step's value is returned as it is, an array too (evaluateStep keeps a single array
 * result of the last step whole).
 */
function buildPath(steps: unknown): Built | undefined {
  if (!Array.isArray(steps) || steps.length === 0) return undefined;
  const first: unknown = steps[0];
  let root: (scope: Scope) => unknown;
  let names: unknown[];
  if (isNode(first) && first.type === 'variable') {
    // A path from a variable has at least one name after it (`$trigger` alone is not a path).
    const read = hasOnly(first, LEAF) && steps.length > 1 ? variable(first.value) : undefined;
    if (read === undefined) return undefined;
    root = read;
    names = steps.slice(1);
  } else {
    root = (scope) => scope.input;
    names = steps;
  }
  const keys: string[] = [];
  for (const step of names) {
    if (!isNode(step) || step.type !== 'name' || typeof step.value !== 'string' || !hasOnly(step, LEAF))
      return undefined;
    keys.push(step.value);
  }
  const run = (scope: Scope): unknown => {
    let value = root(scope);
    for (const key of keys) {
      if (value === undefined) return undefined;
      if (typeof value !== 'object' || value === null) {
        if (typeof value === 'function') return DECLINE;
        // fn.lookup finds nothing in a string, number, boolean or null.
        return undefined;
      }
      // Arrays are mapped over; JSONata's function objects (isFunction) have no properties.
      if (Array.isArray(value) || isJsonataFunction(value)) return DECLINE;
      value = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
    }
    return whole(value);
  };
  // evaluate(path) → evaluateStep → evaluate(step): two levels.
  return { run, depth: 2 };
}

function buildBinary(node: Node): Built | undefined {
  const lhs = build(node.lhs);
  const rhs = build(node.rhs);
  if (lhs === undefined || rhs === undefined) return undefined;
  const depth = 1 + Math.max(lhs.depth, rhs.depth);
  const l = lhs.run;
  const r = rhs.run;
  /** An operator that needs both sides: evaluated left to right, declining if either does. */
  const both = (op: (a: unknown, b: unknown) => unknown): Built => ({
    run: (scope) => {
      const a = l(scope);
      if (a === DECLINE) return DECLINE;
      const b = r(scope);
      if (b === DECLINE) return DECLINE;
      return op(a, b);
    },
    depth,
  });
  switch (node.value) {
    case '&':
      // evaluateStringConcat: nothing is '', everything else goes through fn.string.
      return both((a, b) => {
        const as = a === undefined ? '' : toText(a);
        if (as === DECLINE) return DECLINE;
        const bs = b === undefined ? '' : toText(b);
        if (bs === DECLINE) return DECLINE;
        return as + bs;
      });
    case '=':
    case '!=': {
      const equal = node.value === '=';
      // evaluateEqualityExpression: false when either side is nothing (for both operators), else
      // isDeepEqual, which for anything but two objects is ===.
      return both((a, b) => {
        if (a === undefined || b === undefined) return false;
        if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) return DECLINE;
        return (a === b) === equal;
      });
    }
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const compare = COMPARE[node.value]!;
      // evaluateComparisonExpression: strings with strings, numbers with numbers; nothing on
      // either side gives nothing; anything else throws (T2010, T2009).
      return both((a, b) => {
        const ta = typeof a;
        const tb = typeof b;
        if (
          (ta !== 'string' && ta !== 'number' && ta !== 'undefined') ||
          (tb !== 'string' && tb !== 'number' && tb !== 'undefined')
        )
          return DECLINE;
        if (a === undefined || b === undefined) return undefined;
        if (ta !== tb) return DECLINE;
        return compare(a as number, b as number);
      });
    }
    case '+':
    case '-':
    case '*':
    case '/':
    case '%': {
      const arithmetic = ARITHMETIC[node.value]!;
      // evaluateNumericExpression: numbers (isNumeric: not NaN, and it throws on ±Infinity) or
      // nothing, which gives nothing; anything else throws (T2001, T2002).
      return both((a, b) => {
        if ((a !== undefined && !isFiniteNumber(a)) || (b !== undefined && !isFiniteNumber(b)))
          return DECLINE;
        if (a === undefined || b === undefined) return undefined;
        return arithmetic(a as number, b as number);
      });
    }
    case 'and':
      // evaluateBooleanExpression: boolize the left; the right is evaluated only if needed.
      return {
        run: (scope) => {
          const a = truthy(l(scope));
          if (a !== true) return a; // false or DECLINE
          return truthy(r(scope));
        },
        depth,
      };
    case 'or':
      return {
        run: (scope) => {
          const a = truthy(l(scope));
          if (a !== false) return a; // true or DECLINE
          return truthy(r(scope));
        },
        depth,
      };
    default:
      return undefined;
  }
}

const COMPARE: Record<string, (a: number, b: number) => boolean> = {
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
};

const ARITHMETIC: Record<string, (a: number, b: number) => number> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => a / b,
  '%': (a, b) => a % b,
};

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** evaluateUnary `-`: nothing stays nothing, a number is negated, anything else throws (D1002). */
function buildNegation(expression: unknown): Built | undefined {
  const inner = build(expression);
  if (inner === undefined) return undefined;
  const run = inner.run;
  return {
    run: (scope) => {
      const value = run(scope);
      if (value === undefined) return undefined;
      return isFiniteNumber(value) ? -value : DECLINE;
    },
    depth: 1 + inner.depth,
  };
}

/** evaluateCondition: `then` when fn.boolean(condition) is true, else `else` (or nothing). */
function buildCondition(node: Node): Built | undefined {
  const condition = build(node.condition);
  const then = build(node.then);
  const otherwise = node.else === undefined ? undefined : build(node.else);
  if (condition === undefined || then === undefined || (node.else !== undefined && otherwise === undefined))
    return undefined;
  const test = condition.run;
  const yes = then.run;
  const no = otherwise?.run;
  return {
    run: (scope) => {
      const value = test(scope);
      if (value === DECLINE) return DECLINE;
      const b = value === undefined ? false : toBoolean(value);
      if (b === DECLINE) return DECLINE;
      if (b) return yes(scope);
      return no === undefined ? undefined : no(scope);
    },
    depth: 1 + Math.max(condition.depth, then.depth, otherwise?.depth ?? 0),
  };
}

/** evaluateBlock: each expression in turn, the last one's value (no bindings here to scope). */
function buildBlock(expressions: unknown): Built | undefined {
  if (!Array.isArray(expressions)) return undefined;
  const built: Built[] = [];
  for (const e of expressions) {
    const b = build(e);
    if (b === undefined) return undefined;
    built.push(b);
  }
  const runs = built.map((b) => b.run);
  return {
    run: (scope) => {
      let result: unknown;
      for (const run of runs) {
        result = run(scope);
        if (result === DECLINE) return DECLINE;
      }
      return result;
    },
    depth: 1 + Math.max(0, ...built.map((b) => b.depth)),
  };
}

/**
 * Built-ins of one argument, on the values whose result JSONata's implementation gives without
 * throwing; any other value (an array, an object, null for a string function: JSONata's signature
 * check throws T0410) is declined. An argument that is nothing gives nothing (`$exists`: false).
 */
const FUNCTIONS: Record<string, (arg: unknown) => unknown> = {
  // fn.uppercase, fn.lowercase, fn.trim, fn.length: signature <s-:…>.
  uppercase: (arg) => (typeof arg === 'string' ? arg.toUpperCase() : DECLINE),
  lowercase: (arg) => (typeof arg === 'string' ? arg.toLowerCase() : DECLINE),
  trim: (arg) => (typeof arg === 'string' ? trim(arg) : DECLINE),
  length: (arg) => (typeof arg === 'string' ? codePoints(arg) : DECLINE),
  // fn.string: signature <x-b?:s>.
  string: toText,
  // fn.number: signature <(nsb)-:n>.
  number: toNumber,
  // fn.boolean, fn.not: signature <x-:b>.
  boolean: toBoolean,
  not: (arg) => {
    const b = toBoolean(arg);
    return b === DECLINE ? DECLINE : !b;
  },
};

function buildCall(node: Node): Built | undefined {
  const procedure = node.procedure;
  const args = node.arguments;
  if (!isNode(procedure) || procedure.type !== 'variable' || !hasOnly(procedure, LEAF)) return undefined;
  // Exactly one argument: with none, the context is used; with more, other rules apply.
  if (!Array.isArray(args) || args.length !== 1) return undefined;
  const arg = build(args[0]);
  if (arg === undefined) return undefined;
  const evaluateArg = arg.run;
  // evaluateFunction evaluates the procedure and the argument one level down.
  const depth = 1 + Math.max(1, arg.depth);
  if (procedure.value === 'exists') {
    // fn.exists, signature <x:b>: any value exists.
    return {
      run: (scope) => {
        const value = evaluateArg(scope);
        return value === DECLINE ? DECLINE : value !== undefined;
      },
      depth,
    };
  }
  const name = procedure.value;
  if (typeof name !== 'string' || !Object.hasOwn(FUNCTIONS, name)) return undefined;
  const f = FUNCTIONS[name]!;
  return {
    run: (scope) => {
      const value = evaluateArg(scope);
      if (value === DECLINE || value === undefined) return value;
      return f(value);
    },
    depth,
  };
}

/**
 * fn.string of a defined value other than an object or array (those are JSON.stringify'd with
 * JSONata's replacer: declined). Numbers: non-integers to 15 significant digits; ±Infinity and
 * NaN throw (D3001).
 */
function toText(value: unknown): string | typeof DECLINE {
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) return DECLINE;
      return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(15)));
    case 'object':
      return value === null ? 'null' : DECLINE;
    default:
      return DECLINE;
  }
}

/** fn.number, as written there (its hexadecimal test is anchored oddly; kept as it is). */
function toNumber(value: unknown): number | typeof DECLINE {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    if (
      /^-?[0-9]+(\.[0-9]+)?([Ee][-+]?[0-9]+)?$/.test(value) &&
      !Number.isNaN(Number.parseFloat(value)) &&
      Number.isFinite(Number(value))
    )
      return Number.parseFloat(value);
    if (/^(0[xX][0-9A-Fa-f]+)|(0[oO][0-7]+)|(0[bB][0-1]+)$/.test(value)) return Number(value);
    return DECLINE; // D3030
  }
  if (value === true) return 1;
  if (value === false) return 0;
  return DECLINE; // null, arrays, objects: T0410
}

/**
 * fn.boolean of a defined value: strings by length, numbers by zero (NaN is false; ±Infinity
 * throws D1001), null false. Arrays and objects are declined.
 */
function toBoolean(value: unknown): boolean | typeof DECLINE {
  switch (typeof value) {
    case 'boolean':
      return value;
    case 'string':
      return value.length > 0;
    case 'number':
      if (Number.isNaN(value)) return false;
      if (!Number.isFinite(value)) return DECLINE;
      return value !== 0;
    case 'object':
      return value === null ? false : DECLINE;
    default:
      return DECLINE;
  }
}

/** boolize in evaluateBooleanExpression: fn.boolean, with nothing as false. */
function truthy(value: unknown): boolean | typeof DECLINE {
  if (value === DECLINE) return DECLINE;
  return value === undefined ? false : toBoolean(value);
}

/** fn.trim: runs of space, tab, CR, LF become one space; one leading and trailing space go. */
function trim(value: string): string {
  let result = value.replace(/[ \t\n\r]+/gm, ' ');
  if (result.charAt(0) === ' ') result = result.substring(1);
  if (result.charAt(result.length - 1) === ' ') result = result.substring(0, result.length - 1);
  return result;
}

/** fn.length: characters are code points (stringToArray iterates the string). */
function codePoints(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}
