/**
 * JSON bodies that are slow for QuickJS to parse: QuickJS hashes a property name into its atom
 * table as `h = h * 263 + c` over its characters (quickjs.c `hash_string8`/`hash_string16`), with
 * no seed. Two-character blocks (a, b) and (a + 1, b - 263) add the same to the hash, so strings
 * made of `bits` such blocks, each one or the other, all share one hash: 2^bits distinct keys in
 * one bucket of the table, whatever its size, and every new key walks the whole chain.
 */

const BLOCK_A = String.fromCharCode(0x4e00, 0x5000);
const BLOCK_B = String.fromCharCode(0x4e01, 0x5000 - 263);

/** 2^bits distinct keys of 2·bits characters (CJK ideographs) with one QuickJS atom hash. */
export function collidingKeys(bits: number): string[] {
  const keys: string[] = [];
  for (let i = 0; i < 2 ** bits; i++) {
    let key = '';
    for (let b = 0; b < bits; b++) key += (i >> b) & 1 ? BLOCK_B : BLOCK_A;
    keys.push(key);
  }
  return keys;
}

/** QuickJS's atom hash of `s` (a string atom's initial value is 1), 32 bits. */
export function quickjsHash(s: string): number {
  let h = 1;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 263) + s.charCodeAt(i)) >>> 0;
  return h;
}

/** An object with those keys (each value 1): 65 536 of them make ~6.6 MB of UTF-8 JSON. */
export function collidingObject(bits: number): Record<string, number> {
  const o: Record<string, number> = {};
  for (const key of collidingKeys(bits)) o[key] = 1;
  return o;
}
