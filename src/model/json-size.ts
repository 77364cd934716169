/**
 * Sizes of values as JSON, measured without building the text (`JsonSizer`), and the `Omitted`
 * marker a record holds instead of a value too big for it (model/record-json.ts writes records
 * with them).
 */

/** What an `Omitted` marker says. */
export const OMITTED = 'too large for the execution record';

/**
 * What a record holds instead of a value too big for it: `{"$omitted": "too large for the
 * execution record", "bytes": 289000000}`, `bytes` its size as JSON in UTF-8 bytes, or, with
 * `"atLeast": true`, a lower bound (a value too big even to measure cheaply).
 */
export interface Omitted {
  $omitted: typeof OMITTED;
  bytes: number;
  atLeast?: true;
}

export function isOmitted(value: unknown): value is Omitted {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Partial<Omitted>).$omitted === OMITTED &&
    typeof (value as Partial<Omitted>).bytes === 'number'
  );
}

/** The longest marker text (`bytes` up to 16 digits, with `atLeast`). */
export const MARKER_MAX = JSON.stringify({ $omitted: OMITTED, bytes: 1e15, atLeast: true }).length;

export function markerJson(bytes: number, exact: boolean): string {
  return exact
    ? `{"$omitted":"${OMITTED}","bytes":${bytes}}`
    : `{"$omitted":"${OMITTED}","bytes":${bytes},"atLeast":true}`;
}

/** Visits a marker's measure may make past the room left, for an exact `bytes` (`JsonSizer.measure`). */
const MEASURE_NODES = 100_000;

/** Strings at least this long have their sizes remembered (scanning them again would cost their length). */
const REMEMBER_STRING = 256;

/** Text JSON.stringify writes as is, one byte a character: printable ASCII but `"` and `\`. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** JSON.stringify's size of `s` in UTF-8 bytes, quotes included. */
export function stringJsonSize(s: string): number {
  if (PLAIN.test(s)) return s.length + 2;
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      if (c >= 0x20) n += c === 0x22 || c === 0x5c ? 2 : 1;
      // \b \t \n \f \r, or \u00XX.
      else n += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
    } else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 6; // a lone surrogate is written \udXXX
    } else if (c >= 0xdc00 && c <= 0xdfff) n += 6;
    else n += 3;
  }
  return n;
}

function numberJsonSize(n: number): number {
  if (!Number.isFinite(n)) return 4; // null
  if (Number.isSafeInteger(n) && n >= 0 && n < 1e9) return n < 10 ? 1 : n < 100 ? 2 : String(n).length;
  return String(n).length;
}

/** JSON.stringify leaves this out of an object (and writes null for it in an array). */
export const SKIP = -1;

/** Thrown by the walk of `measure` when its visits are spent. */
const SPENT: unique symbol = Symbol('spent');

/**
 * Sizes of values as JSON.stringify would write them, in UTF-8 bytes, without writing them. A
 * walk stops as soon as it has counted more than it was asked about, so a value of 289 MB costs
 * what its first `limit` bytes do; sizes of objects and long strings are remembered (by identity:
 * values in a run are not changed once made), so a value met again, or shared by many, is not
 * walked again.
 */
export class JsonSizer {
  /** Exact sizes (≥ 0), or lower bounds as negative numbers (a walk that stopped early). */
  readonly #objects: WeakMap<object, number> | undefined;
  readonly #strings: Map<string, number> | undefined;
  #visits = Number.POSITIVE_INFINITY;

  /** `remember: false`: one quick walk of something small, not worth remembering sizes for. */
  constructor({ remember = true }: { remember?: boolean } = {}) {
    this.#objects = remember ? new WeakMap() : undefined;
    this.#strings = remember ? new Map() : undefined;
  }

  /**
   * The size of `value`'s JSON when it is at most `limit`; otherwise some number above `limit`.
   * SKIP (-1) for what JSON leaves out of an object (undefined, a function, a symbol).
   */
  size(value: unknown, limit: number): number {
    this.#visits = Number.POSITIVE_INFINITY;
    return this.#walk(value, limit);
  }

  /** The exact size of `value`, or undefined when it takes more than `visits` nodes to tell. */
  measure(value: unknown, visits = MEASURE_NODES): number | undefined {
    this.#visits = visits;
    try {
      return this.#walk(value, Number.POSITIVE_INFINITY);
    } catch (err) {
      if (err === SPENT) return undefined;
      throw err;
    } finally {
      this.#visits = Number.POSITIVE_INFINITY;
    }
  }

  #walk(v: unknown, limit: number): number {
    switch (typeof v) {
      case 'string':
        return this.#string(v, limit);
      case 'number':
        return numberJsonSize(v);
      case 'boolean':
        return v ? 4 : 5;
      case 'object':
        return v === null ? 4 : this.#object(v, limit);
      case 'bigint':
        throw new TypeError('Do not know how to serialize a BigInt');
      default:
        return SKIP;
    }
  }

  #string(s: string, limit: number): number {
    if (s.length < REMEMBER_STRING || !this.#strings) {
      if (s.length + 2 > limit) return s.length + 2;
      return stringJsonSize(s);
    }
    let n = this.#strings.get(s);
    if (n !== undefined) return n;
    // Never fewer bytes than UTF-16 units: too long is told without reading it.
    if (s.length + 2 > limit) return s.length + 2;
    if (--this.#visits < 0) throw SPENT;
    n = stringJsonSize(s);
    this.#strings.set(s, n);
    return n;
  }

  #object(o: object, limit: number): number {
    const known = this.#objects?.get(o);
    if (known !== undefined && (known >= 0 || -known > limit)) return known >= 0 ? known : -known;
    if (--this.#visits < 0) throw SPENT;
    const toJSON = (o as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return this.#walk(toJSON.call(o, ''), limit);
    let n = 2;
    if (Array.isArray(o)) {
      for (let i = 0; i < o.length; i++) {
        if (--this.#visits < 0) throw SPENT;
        if (i > 0) n++;
        const s = this.#walk(o[i], limit - n);
        n += s === SKIP ? 4 : s;
        if (n > limit) return this.#lowerBound(o, n);
      }
    } else {
      let first = true;
      const rec = o as Record<string, unknown>;
      for (const k in rec) {
        if (!Object.hasOwn(rec, k)) continue;
        if (--this.#visits < 0) throw SPENT;
        const s = this.#walk(rec[k], limit - n);
        if (s === SKIP) continue;
        n += (first ? 0 : 1) + this.#string(k, Number.POSITIVE_INFINITY) + 1 + s;
        first = false;
        if (n > limit) return this.#lowerBound(o, n);
      }
    }
    this.#objects?.set(o, n);
    return n;
  }

  #lowerBound(o: object, n: number): number {
    const known = this.#objects?.get(o);
    if (known === undefined || (known < 0 && -known < n)) this.#objects?.set(o, -n);
    return n;
  }
}
