import { describe, expect, it } from 'vitest';
import { isMethod, METHODS, normalizePath, pathShape } from '../../src/shared/path.js';

describe('normalizePath', () => {
  it.each([
    ['orders', 'orders'],
    ['/orders/', 'orders'],
    ['///orders/:id//', 'orders/:id'],
    ['a/b/c', 'a/b/c'],
    ['Orders/New', 'Orders/New'], // case is kept
    ['v1.2/x~y/a_b-c', 'v1.2/x~y/a_b-c'],
    ['...', '...'],
    [':id', ':id'],
    ['users/:userId/orders/:_order1', 'users/:userId/orders/:_order1'],
    ['6c08fcb6-9179-94f3-8a3c-1d2e3f4a5b6c', '6c08fcb6-9179-94f3-8a3c-1d2e3f4a5b6c'],
    ['a'.repeat(512), 'a'.repeat(512)],
    [`/${'a'.repeat(512)}/`, 'a'.repeat(512)], // the limit applies after stripping slashes
    [Array(32).fill('s').join('/'), Array(32).fill('s').join('/')],
  ])('%j → %j', (input, expected) => {
    expect(normalizePath(input)).toEqual({ ok: true, path: expected });
  });

  it.each([
    ['empty', ''],
    ['only slashes', '///'],
    ['double slash inside', 'a//b'],
    ['space', 'a b'],
    ['percent', 'a%20b'],
    ['query string', 'a?b=1'],
    ['fragment', 'a#b'],
    ['backslash', 'a\\b'],
    ['non-ascii', 'café'],
    ['NUL', 'a\0b'],
    ['dot segment', 'a/./b'],
    ['dot-dot segment', '../etc/passwd'],
    ['bare colon', 'a/:'],
    ['param starting with digit', ':1id'],
    ['param with dash', ':my-id'],
    ['colon inside static', 'a:b'],
    ['wildcard', 'a/*'],
    ['duplicate param', 'a/:id/b/:id'],
    ['__proto__ param', ':__proto__'],
    ['over 512 chars', 'a'.repeat(513)],
    ['over 32 segments', Array(33).fill('s').join('/')],
    ['very long hostile input', `${'a/'.repeat(1_000_000)}a`],
  ])('rejects %s', (_label, input) => {
    const result = normalizePath(input);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatch(/^The path .*\.$/);
      expect(result.error.length).toBeLessThan(200); // never echoes huge input back
    }
  });
});

describe('pathShape', () => {
  it.each([
    ['orders', 'orders'],
    ['orders/:id', 'orders/:'],
    ['orders/:x', 'orders/:'],
    [':a/b/:c', ':/b/:'],
    ['a/b', 'a/b'],
  ])('%j → %j', (path, shape) => {
    expect(pathShape(path)).toBe(shape);
  });
});

describe('isMethod', () => {
  it.each<[string, boolean]>([
    ...METHODS.map((m): [string, boolean] => [m, true]),
    ['OPTIONS', false],
    ['get', false],
    ['', false],
  ])('%j → %j', (value, expected) => {
    expect(isMethod(value)).toBe(expected);
  });
});
