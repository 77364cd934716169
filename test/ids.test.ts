import fc from 'fast-check';
import { validate as isUuid, version as uuidVersion } from 'uuid';
import { describe, expect, it, vi } from 'vitest';
import { isoString, newId, nowIso, uuidV7Generator } from '../src/ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const timestampOf = (id: string) => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
const counterOf = (id: string) => Number.parseInt(id.slice(15, 18), 16);

/** A clock that returns the given readings in turn, each `count` times. */
function scriptedClock(readings: { ms: number; count: number }[]): { clock: () => number; total: number } {
  const sequence = readings.flatMap(({ ms, count }) => Array<number>(count).fill(ms));
  let i = 0;
  return { clock: () => sequence[i++]!, total: sequence.length };
}

// Around today, and near the ends of the 48-bit range, with repeats and steps back of any size.
const msArb = fc.oneof(
  fc.integer({ min: 1_700_000_000_000, max: 1_700_000_000_050 }),
  fc.integer({ min: 0, max: 2 ** 48 - 10_000 }),
);
const readingsArb = fc.array(fc.record({ ms: msArb, count: fc.integer({ min: 1, max: 40 }) }), {
  minLength: 1,
  maxLength: 30,
});

describe('uuidV7Generator', () => {
  it('makes lowercase 36-character version-7, variant-10 UUIDs whatever the clock and the random bytes', () => {
    fc.assert(
      fc.property(readingsArb, fc.uint8Array({ minLength: 1, maxLength: 64 }), (readings, bytes) => {
        const { clock, total } = scriptedClock(readings);
        // Any random bytes, repeated over the pool: the variant digit must still be 8, 9, a or b.
        const next = uuidV7Generator({ clock, fill: (b) => b.fill(Buffer.from(bytes)) });
        for (let i = 0; i < total; i++) {
          const id = next();
          expect(id).toMatch(UUID_V7);
          expect(isUuid(id) && uuidVersion(id)).toBe(7);
        }
      }),
    );
  });

  it('is strictly increasing, as strings, however the clock repeats or steps back', () => {
    fc.assert(
      fc.property(readingsArb, (readings) => {
        const { clock, total } = scriptedClock(readings);
        const next = uuidV7Generator({ clock });
        let previous = '';
        for (let i = 0; i < total; i++) {
          const id = next();
          expect(id > previous).toBe(true);
          previous = id;
        }
      }),
    );
  });

  it('carries the clock reading as its timestamp, never behind the highest reading seen', () => {
    fc.assert(
      fc.property(readingsArb, (readings) => {
        const { clock, total } = scriptedClock(readings);
        const sequence = readings.flatMap(({ ms, count }) => Array<number>(count).fill(ms));
        const next = uuidV7Generator({ clock });
        let highest = Number.NEGATIVE_INFINITY;
        let lastStamp = Number.NEGATIVE_INFINITY;
        for (let i = 0; i < total; i++) {
          const id = next();
          const reading = sequence[i]!;
          const stamp = timestampOf(id);
          // A clock that moves forward is taken as is...
          if (reading > lastStamp) expect(stamp).toBe(reading);
          // ...one that repeats or steps back keeps the last timestamp (no counter overflow here:
          // at most 1200 ids against at least 2048 counter values per millisecond).
          else expect(stamp).toBe(lastStamp);
          highest = Math.max(highest, reading);
          expect(stamp).toBeGreaterThanOrEqual(highest);
          lastStamp = stamp;
        }
      }),
    );
  });

  it('moves the timestamp one millisecond ahead when 4096 ids share a millisecond, and stays ordered', () => {
    const ms = 1_700_000_000_000;
    // Counter seed 0 (all random bytes zero): 4096 ids fit in the millisecond, the 4097th borrows the next.
    const next = uuidV7Generator({ clock: () => ms, fill: (b) => b.fill(0) });
    const ids = Array.from({ length: 3 * 4096 + 5 }, next);
    expect(ids[0]).toBe('018bcfe5-6800-7000-8000-000000000000');
    expect(timestampOf(ids[4095]!)).toBe(ms);
    expect(counterOf(ids[4095]!)).toBe(0xfff);
    expect(timestampOf(ids[4096]!)).toBe(ms + 1);
    expect(counterOf(ids[4096]!)).toBe(0);
    expect(timestampOf(ids.at(-1)!)).toBe(ms + 3);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('seeds the counter with 11 random bits in each new millisecond, leaving room for 2048 ids', () => {
    let ms = 1_700_000_000_000;
    const next = uuidV7Generator({ clock: () => ms++, fill: (b) => b.fill(0xff) });
    for (let i = 0; i < 10; i++) expect(counterOf(next())).toBe(0x7ff);
  });

  it('takes rand_b from the random bytes', () => {
    const bytes = Buffer.from('0123456789abcdef0123456789abcdef0123', 'hex');
    const next = uuidV7Generator({ clock: () => 1, fill: (b) => b.fill(bytes) });
    // Pool hex: 012 (counter seed) then 3456789abcdef012 -> variant digit of 3 is b.
    expect(next()).toBe('00000000-0001-7012-b456-789abcdef012');
  });
});

describe('newId', () => {
  it('is a UUIDv7 of about now, strictly increasing across many ids in the same millisecond', () => {
    const before = Date.now();
    const ids = Array.from({ length: 20_000 }, newId);
    const after = Date.now();
    for (const id of ids) expect(id).toMatch(UUID_V7);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(timestampOf(ids[0]!)).toBeGreaterThanOrEqual(before);
    // 20 000 ids may borrow at most ~10 ms ahead of the clock.
    expect(timestampOf(ids.at(-1)!)).toBeLessThanOrEqual(after + 10);
  });
});

describe('isoString', () => {
  const MAX = 8.64e15; // the largest time a Date holds
  const msArb = fc.oneof(
    fc.integer({ min: -MAX, max: MAX }),
    // Around now, across midnight, and the day edges where the cached prefix changes.
    fc.integer({ min: 1_767_225_500_000, max: 1_767_225_700_000 }),
    fc.integer({ min: -3, max: 3 }).map((d) => d * 86_400_000 + [-1, 0, 1][Math.abs(d) % 3]!),
    fc.constantFrom(-MAX, MAX, -62_167_219_200_001, 253_402_300_800_000),
  );

  it('is exactly Date#toISOString for any time, in any order of calls', () => {
    fc.assert(
      fc.property(fc.array(msArb, { minLength: 1, maxLength: 20 }), (times) => {
        for (const ms of times) expect(isoString(new Date(ms))).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 500 },
    );
  });

  it('throws the same RangeError for an invalid date', () => {
    expect(() => isoString(new Date(Number.NaN))).toThrow(RangeError);
  });

  it('nowIso is the current time', () => {
    const before = Date.now();
    const now = Date.parse(nowIso());
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it('nowIso follows the clock millisecond by millisecond, across days', () => {
    vi.useFakeTimers();
    try {
      for (const t of [Date.UTC(2026, 10, 22, 23, 59, 59, 998), Date.UTC(2030, 0, 1, 0, 0, 0, 0)]) {
        vi.setSystemTime(t);
        expect(nowIso()).toBe(new Date(t).toISOString());
        expect(nowIso()).toBe(new Date(t).toISOString());
        vi.setSystemTime(t + 1);
        expect(nowIso()).toBe(new Date(t + 1).toISOString());
        vi.setSystemTime(t + 2);
        expect(nowIso()).toBe(new Date(t + 2).toISOString());
      }
    } finally {
      vi.useRealTimers();
    }
  });
});
