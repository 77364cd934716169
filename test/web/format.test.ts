import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  formatAgo,
  formatCountdown,
  formatDuration,
  formatTime,
  pretty,
  short,
  typeOf,
} from '../../web/src/lib/format.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('formatTime', () => {
  it('shows a dash for no time', () => {
    expect(formatTime(null)).toBe('—');
    expect(formatTime(undefined)).toBe('—');
    expect(formatTime('')).toBe('—');
  });

  it('gives back text that is not a date as it is', () => {
    expect(formatTime('not a date')).toBe('not a date');
  });

  it('shows only the time of day for today', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(2024, 2, 5, 18, 0, 0));
    const text = formatTime(new Date(2024, 2, 5, 14, 7, 9).toISOString());
    expect(text).toMatch(/07/);
    expect(text).toMatch(/09/);
    expect(text).not.toMatch(/2024/);
  });

  it('shows the date with the year for another day', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(2024, 2, 5, 18, 0, 0));
    const text = formatTime(new Date(2020, 0, 2, 3, 4, 5).toISOString());
    expect(text).toMatch(/2020/);
    expect(text).toMatch(/04/);
    expect(text).toMatch(/05/);
  });
});

describe('formatAgo', () => {
  const now = Date.parse('2024-03-05T12:00:00.000Z');
  const ago = (ms: number) => formatAgo(new Date(now - ms).toISOString(), now);

  it('shows a dash for no time and gives back text that is not a date', () => {
    expect(formatAgo(null, now)).toBe('—');
    expect(formatAgo(undefined, now)).toBe('—');
    expect(formatAgo('yesterday', now)).toBe('yesterday');
  });

  it('says just now under 5 seconds (and for times in the future)', () => {
    expect(ago(0)).toBe('just now');
    expect(ago(4_999)).toBe('just now');
    expect(ago(-60_000)).toBe('just now');
  });

  it('counts seconds, minutes and hours', () => {
    expect(ago(5_000)).toBe('5 s ago');
    expect(ago(42_000)).toBe('42 s ago');
    expect(ago(60_000)).toBe('1 min ago');
    expect(ago(5 * 60_000 + 10_000)).toBe('5 min ago');
    expect(ago(3_600_000)).toBe('1 h ago');
    expect(ago(23 * 3_600_000)).toBe('23 h ago');
  });

  it('never rounds up to 60 s, 60 min or 24 h', () => {
    expect(ago(59_600)).toBe('59 s ago');
    expect(ago(3_599_000)).toBe('59 min ago');
    expect(ago(86_399_000)).toBe('23 h ago');
  });

  it('shows the date from a day on', () => {
    const iso = new Date(now - 86_400_000).toISOString();
    expect(formatAgo(iso, now)).toBe(formatTime(iso));
    expect(formatAgo(iso, now)).not.toMatch(/ago/);
  });

  it('uses the current time by default', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(now);
    expect(formatAgo(new Date(now - 120_000).toISOString())).toBe('2 min ago');
  });
});

describe('formatDuration', () => {
  const from = '2024-03-05T12:00:00.000Z';
  const lasting = (ms: number) => formatDuration(from, new Date(Date.parse(from) + ms).toISOString());

  it('shows a dash when an end is missing, not a date, or before the start', () => {
    expect(formatDuration(null, from)).toBe('—');
    expect(formatDuration(from, undefined)).toBe('—');
    expect(formatDuration(from, 'later')).toBe('—');
    expect(lasting(-1)).toBe('—');
  });

  it('shows milliseconds under a second', () => {
    expect(lasting(0)).toBe('0 ms');
    expect(lasting(999)).toBe('999 ms');
  });

  it('shows seconds with two decimals under 10 s and one decimal under a minute', () => {
    expect(lasting(1_000)).toBe('1.00 s');
    expect(lasting(1_234)).toBe('1.23 s');
    expect(lasting(10_000)).toBe('10.0 s');
    expect(lasting(42_360)).toBe('42.4 s');
  });

  it('shows minutes and seconds from a minute on', () => {
    expect(lasting(60_000)).toBe('1 min 0 s');
    expect(lasting(61_400)).toBe('1 min 1 s');
    expect(lasting(125_000)).toBe('2 min 5 s');
    expect(lasting(3_600_000)).toBe('60 min 0 s');
  });

  it('rounds into the next unit instead of showing 60 of one', () => {
    expect(lasting(9_999)).toBe('10.0 s');
    expect(lasting(59_999)).toBe('1 min 0 s');
    expect(lasting(119_600)).toBe('2 min 0 s');
    expect(lasting(179_700)).toBe('3 min 0 s');
  });
});

describe('formatCountdown', () => {
  it('shows minutes and two-digit seconds', () => {
    expect(formatCountdown(0)).toBe('0:00');
    expect(formatCountdown(5)).toBe('0:05');
    expect(formatCountdown(65)).toBe('1:05');
    expect(formatCountdown(600)).toBe('10:00');
  });

  it('rounds partial seconds up and never goes below zero', () => {
    expect(formatCountdown(59.01)).toBe('1:00');
    expect(formatCountdown(0.2)).toBe('0:01');
    expect(formatCountdown(-3)).toBe('0:00');
  });

  it('reads back as the whole seconds left', () => {
    fc.assert(
      fc.property(fc.double({ min: -100, max: 100_000, noNaN: true }), (seconds) => {
        const match = /^(\d+):(\d\d)$/.exec(formatCountdown(seconds));
        expect(match).not.toBeNull();
        const [, m, s] = match!;
        expect(Number(s)).toBeLessThan(60);
        expect(Number(m) * 60 + Number(s)).toBe(Math.max(0, Math.ceil(seconds)));
      }),
    );
  });
});

describe('pretty', () => {
  it('shows JSON indented by two spaces', () => {
    expect(pretty({ a: [1, 'x'] })).toBe('{\n  "a": [\n    1,\n    "x"\n  ]\n}');
    expect(pretty('x')).toBe('"x"');
    expect(pretty(null)).toBe('null');
  });

  it('shows undefined as the word', () => {
    expect(pretty(undefined)).toBe('undefined');
  });
});

describe('short', () => {
  it('shows strings quoted, other values as JSON and undefined as a dash', () => {
    expect(short('abc')).toBe('"abc"');
    expect(short('a"b\nc')).toBe('"a\\"b\\nc"');
    expect(short({ a: 1, b: [true, null] })).toBe('{"a":1,"b":[true,null]}');
    expect(short(3.5)).toBe('3.5');
    expect(short(null)).toBe('null');
    expect(short(undefined)).toBe('—');
  });

  it('cuts to max characters with an ellipsis', () => {
    expect(short('abcdefghij', 6)).toBe('"abcd…');
    expect(short('abcd', 6)).toBe('"abcd"');
    expect(short('x'.repeat(200))).toHaveLength(80);
    expect(short('x'.repeat(200)).endsWith('…')).toBe(true);
  });

  it('never exceeds max and keeps short text whole', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 2, max: 120 }), (value, max) => {
        const text = short(value, max);
        const full = JSON.stringify(value);
        expect(text.length).toBeLessThanOrEqual(max);
        if (full.length <= max) expect(text).toBe(full);
        else expect(text).toBe(`${full.slice(0, max - 1)}…`);
      }),
    );
  });
});

describe('typeOf', () => {
  it('names JSON types, telling integers from other numbers', () => {
    expect(typeOf(null)).toBe('null');
    expect(typeOf([])).toBe('array');
    expect(typeOf({})).toBe('object');
    expect(typeOf(3)).toBe('integer');
    expect(typeOf(-0)).toBe('integer');
    expect(typeOf(3.5)).toBe('number');
    expect(typeOf(Number.NaN)).toBe('number');
    expect(typeOf('3')).toBe('string');
    expect(typeOf(true)).toBe('boolean');
    expect(typeOf(undefined)).toBe('undefined');
  });
});
