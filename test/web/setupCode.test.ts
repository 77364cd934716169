import { describe, expect, it } from 'vitest';
import { setupCodeOf } from '../../web/src/lib/setupCode';

describe('setupCodeOf', () => {
  it.each([
    ['#setup-code=0123456789abcdef0123456789abcdef', '0123456789abcdef0123456789abcdef'],
    ['#setup-code=%20abc%20', 'abc'],
    ['#other=1&setup-code=abc', 'abc'],
    ['#setup-code=', ''],
    ['#setup', ''],
    ['', ''],
  ])('reads %j as %j', (hash, code) => {
    expect(setupCodeOf(hash)).toBe(code);
  });
});
