/** The pause between http attempts (SPEC 7c): exponential backoff with jitter, Retry-After capped at an hour. */
import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, pauseBefore, retryAfterMs } from '../../../src/engine/steps/http.js';

describe('retryAfterMs', () => {
  it('reads delay-seconds and HTTP dates; ignores what it cannot read', () => {
    expect(retryAfterMs('2')).toBe(2_000);
    expect(retryAfterMs(' 0 ')).toBe(0);
    const now = Date.parse('2026-11-23T20:00:00Z');
    expect(retryAfterMs('Mon, 23 Nov 2026 20:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Mon, 23 Nov 2026 19:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs('-5')).toBeUndefined();
  });
});

describe('pauseBefore', () => {
  it('honours Retry-After, capped at one hour', () => {
    expect(pauseBefore(2, 1_000, '3')).toBe(3_000);
    expect(pauseBefore(2, 1_000, '999999')).toBe(MAX_RETRY_AFTER_MS);
    expect(MAX_RETRY_AFTER_MS).toBe(3_600_000);
    expect(pauseBefore(2, 1_000, ['1', '7'])).toBe(1_000);
  });

  it('doubles backoffMs per attempt, half of it random', () => {
    for (let i = 0; i < 200; i++) {
      const second = pauseBefore(2, 1_000, undefined);
      expect(second).toBeGreaterThanOrEqual(500);
      expect(second).toBeLessThanOrEqual(1_000);
      const third = pauseBefore(3, 1_000, undefined);
      expect(third).toBeGreaterThanOrEqual(1_000);
      expect(third).toBeLessThanOrEqual(2_000);
    }
    const many = new Set(Array.from({ length: 50 }, () => pauseBefore(4, 1_000, undefined)));
    expect(many.size).toBeGreaterThan(1);
    expect(pauseBefore(40, 1_000, undefined)).toBeLessThanOrEqual(MAX_RETRY_AFTER_MS);
  });
});
