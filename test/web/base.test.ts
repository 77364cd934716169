import { describe, expect, it } from 'vitest';
import { basePath, withoutBase } from '../../web/src/base';

describe('basePath', () => {
  it.each([
    ['/', ''],
    ['/hookflow/', '/hookflow'],
    ['/tools/hookflow//', '/tools/hookflow'],
  ])('reads <base href="%s"> as %j', (href, expected) => {
    expect(basePath(href)).toBe(expected);
  });
});

describe('withoutBase', () => {
  it.each([
    ['/hookflow/workflows/1', '/workflows/1'],
    ['/hookflow/', '/'],
    ['/hookflow', '/'],
    // Not under the base: as it is (the UI shows its "no page here").
    ['/hookflowx/tokens', '/hookflowx/tokens'],
    ['/tokens', '/tokens'],
  ])('gives %s as %s under /hookflow', (pathname, expected) => {
    expect(withoutBase(pathname, '/hookflow')).toBe(expected);
  });

  it('leaves every path alone at the root', () => {
    expect(withoutBase('/workflows/1', '')).toBe('/workflows/1');
  });
});
