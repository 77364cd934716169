import { describe, expect, it } from 'vitest';
import { renewAt } from '../../src/credentials/oauth2.js';

describe('renewAt: an access token is renewed in its last 10 % or 60 s, not before half its life', () => {
  const S = 1_000;
  it.each([
    // life, renewed this long before expiry
    { life: 3600 * S, before: 360 * S },
    { life: 600 * S, before: 60 * S },
    { life: 300 * S, before: 60 * S },
    { life: 120 * S, before: 60 * S },
    { life: 60 * S, before: 30 * S },
    { life: 4 * S, before: 2 * S },
    { life: 0, before: 0 },
  ])('a token living $life ms is renewed $before ms before it expires', ({ life, before }) => {
    const got = 1_700_000_000_000;
    expect(got + life - renewAt(got, got + life)).toBe(before);
  });
});
