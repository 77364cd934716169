/**
 * What a code thread's QuickJS context runs once, when it is made (quickjs.ts `sandboxContext`),
 * and how a run's source is wrapped. One context serves run after run, so everything one run could
 * reach and change is made unchangeable here, before any user code runs.
 */

/** The user's code is the body of this function; its line 1 is line 2 of what QuickJS runs. */
export const HEAD = '(function () {\n';
export const TAIL = '\n})';

/**
 * The names under which a run finds its inputs: globals, read through accessors (see PRELUDE).
 * `$item` and `$index` are the element and index of the innermost `forEach` around the step
 * (undefined outside any loop).
 */
export const INPUT_NAMES = ['$input', '$trigger', '$steps', '$execution', '$item', '$index'] as const;

/** The host's answer for an input that is absent (`$item` outside a loop): read as undefined. */
export const NO_INPUT = '';

/** What `__hookflowInput` is asked for the seeds of Math.random (after the inputs). */
export const SEED_INPUT = INPUT_NAMES.length;

/** The first character of the runner's answer when the code threw `null` or `undefined`. */
export const THREW = '\u0001';

/**
 * Evaluates to the runner, `(fn) => JSON text`, after setting up the context:
 *
 * - `console.log` (and info/warn/error/debug), formatting as Node does for the common cases:
 *   strings as they are, the rest as JSON, String() for what JSON cannot show.
 * - The inputs as lazily parsed globals. `$input`, `$trigger`, `$steps`, `$execution`, `$item`
 *   and `$index` are accessors: the first read of one in a run asks the host for its JSON text
 *   (`__hookflowInput(i)`) and parses it with QuickJS's JSON.parse, so a run that never reads
 *   `$trigger` never copies or parses the request body. That matters beyond speed: QuickJS's
 *   JSON.parse cannot be interrupted, and QuickJS hashes property names into its atom table with
 *   no seed (`h = h * 263 + c`), so a body whose keys all collide costs it quadratic time
 *   (65 536 such keys: 32.5 s on this machine, against 0.2 s for random keys of the same size;
 *   QuickJS-ng 0.32's variant, same hash: 64 s). A run that reads such a body is stopped at its
 *   time limit by the code thread's owner (threads.ts), however long the parse would take.
 *   Assigning one (`$input = …`) replaces it for the rest of the run.
 * - `Math.random` seeded afresh for each run that calls it, from the host's CSPRNG
 *   (`__hookflowInput(SEED_INPUT)`: xoshiro128**, 53 bits a number): QuickJS's own generator keeps its
 *   state in the context, so one run could have predicted the numbers of the next.
 * - Every object reachable from the global object, and every intrinsic only syntax reaches
 *   (iterator prototypes, generator and async function machinery, iterator helpers,
 *   %ThrowTypeError%: see `SYNTAX`), frozen, as SES's lockdown does: a run cannot leave a
 *   global, a patched prototype or a changed built-in behind for the next (assignments to them
 *   are ignored, or throw in strict code). The few prototype properties code commonly shadows by
 *   assignment (`this.name` in an Error subclass, `o.toString`) are made assignable on the object
 *   ("override taming").
 *
 * The runner resets the per-run state (inputs not read yet, random not seeded), calls the user's
 * function and answers its result as JSON text ('null' for undefined), or THREW + 'null' /
 * 'undefined' when the code threw one of those (QuickJS reports an uncaught null like the null
 * it throws when it cannot even allocate an out-of-memory error; the host tells them apart by the
 * heap's size).
 */
export const PRELUDE = `(() => {
  const send = globalThis.__hookflowLog;
  const host = globalThis.__hookflowInput;
  delete globalThis.__hookflowLog;
  delete globalThis.__hookflowInput;
  const show = (v) => {
    if (typeof v === 'string') return v;
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol' || typeof v === 'bigint') return String(v);
    if (v instanceof Error) return String(v);
    try { const t = JSON.stringify(v); return t === undefined ? String(v) : t; } catch { return String(v); }
  };
  const log = (...args) => { send(args.map(show).join(' ')); };
  globalThis.console = { log, info: log, warn: log, error: log, debug: log };
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const apply = Reflect.apply;

  let values = [];
  let read = 0;
  ${JSON.stringify(INPUT_NAMES)}.forEach((name, i) => {
    Object.defineProperty(globalThis, name, {
      get() {
        if ((read & (1 << i)) === 0) {
          const text = host(i);
          values[i] = text === ${JSON.stringify(NO_INPUT)} ? undefined : parse(text);
          read |= 1 << i;
        }
        return values[i];
      },
      set(v) { values[i] = v; read |= 1 << i; },
      enumerable: false,
      configurable: false,
    });
  });

  let a = 0, b = 0, c = 0, d = 0, seeded = false;
  const next = () => {
    const r = Math.imul(((Math.imul(b, 5) << 7) | (Math.imul(b, 5) >>> 25)), 9) >>> 0;
    const t = b << 9;
    c ^= a; d ^= b; b ^= c; a ^= d; c ^= t;
    d = (d << 11) | (d >>> 21);
    return r;
  };
  const random = () => {
    if (!seeded) {
      const s = host(${SEED_INPUT}).split(',');
      a = s[0] | 0; b = s[1] | 0; c = s[2] | 0; d = s[3] | 0;
      if ((a | b | c | d) === 0) a = 1;
      seeded = true;
    }
    return ((next() >>> 5) * 67108864 + (next() >>> 6)) / 9007199254740992;
  };
  Object.defineProperty(Math, 'random', { value: random, writable: true, enumerable: false, configurable: true });

  // The "override mistake": assigning a property that a frozen prototype holds (\`this.name = …\` in
  // an Error subclass, \`o.toString = …\`) would be silently ignored. For those commonly assigned,
  // the prototype's property becomes an accessor that defines the property on the object instead
  // (as SES's override taming does).
  const tame = (proto, key) => {
    const d = Object.getOwnPropertyDescriptor(proto, key);
    if (!d || !('value' in d)) return;
    const value = d.value;
    Object.defineProperty(proto, key, {
      get() { return value; },
      set(v) {
        if (this === proto) throw new TypeError('Cannot change a built-in prototype in the code sandbox');
        Object.defineProperty(this, key, { value: v, writable: true, enumerable: true, configurable: true });
      },
      enumerable: d.enumerable,
      configurable: false,
    });
  };
  for (const key of ['toString', 'valueOf', 'toLocaleString', 'constructor', 'hasOwnProperty']) tame(Object.prototype, key);
  for (const E of [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError])
    for (const key of ['name', 'message', 'constructor', 'toString']) tame(E.prototype, key);
  for (const key of ['toString', 'constructor']) tame(Function.prototype, key);

  const seen = new Set();
  const harden = (o) => {
    if ((typeof o !== 'object' && typeof o !== 'function') || o === null || seen.has(o)) return;
    seen.add(o);
    Object.freeze(o);
    harden(Object.getPrototypeOf(o));
    for (const key of Reflect.ownKeys(o)) {
      const d = Object.getOwnPropertyDescriptor(o, key);
      if ('value' in d) harden(d.value);
      else { harden(d.get); harden(d.set); }
    }
  };
  harden(globalThis);
  // SYNTAX: what only syntax reaches. Each sample is a fresh object whose prototype chain (and
  // the constructors and prototypes hanging off it) holds the shared intrinsics; hardening the
  // sample freezes them: %ArrayIteratorPrototype%, %StringIteratorPrototype%,
  // %MapIteratorPrototype%, %SetIteratorPrototype%, %RegExpStringIteratorPrototype%,
  // %IteratorPrototype%, %GeneratorFunction% and its prototype, %GeneratorPrototype%,
  // %AsyncFunction% and its prototype, %AsyncGeneratorFunction% and its prototype,
  // %AsyncGeneratorPrototype%, %AsyncIteratorPrototype%, %IteratorHelperPrototype%,
  // %WrapForValidIteratorPrototype%, %ThrowTypeError%.
  const samples = [
    [][Symbol.iterator](),
    ''[Symbol.iterator](),
    new Map()[Symbol.iterator](),
    new Set()[Symbol.iterator](),
    /a/g[Symbol.matchAll](''),
    function* () {},
    (function* () {})(),
    async function () {},
    async () => {},
    async function* () {},
    (async function* () {})(),
    (function () { 'use strict'; return Object.getOwnPropertyDescriptor(arguments, 'callee').get; })(),
  ];
  if (typeof Iterator === 'function') {
    samples.push(Iterator.from({ next() { return { done: true, value: undefined }; } }));
    if (typeof Iterator.prototype.map === 'function') samples.push([].values().map((x) => x));
    if (typeof Iterator.concat === 'function') samples.push(Iterator.concat());
  }
  for (const sample of samples) harden(sample);

  return (fn) => {
    values = [];
    read = 0;
    seeded = false;
    try {
      const out = stringify(apply(fn, undefined, []));
      return out === undefined ? 'null' : out;
    } catch (e) {
      if (e === null || e === undefined) return '\\u0001' + String(e);
      throw e;
    }
  };
})()`;
