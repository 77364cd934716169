import { describe, expect, it } from 'vitest';
import { sharedMethods } from '../../web/src/lib/pathConflicts.js';

// The editor's Save warning (issue 17 #6) uses the server's rule: same path shape, a method in common.
describe('sharedMethods', () => {
  it('is the methods two triggers share on the same path', () => {
    expect(
      sharedMethods({ path: 'orders', methods: ['POST', 'PUT'] }, { path: 'orders', methods: ['PUT'] }),
    ).toEqual(['PUT']);
  });

  it('compares path shapes: parameter names do not matter', () => {
    expect(
      sharedMethods(
        { path: 'users/:id', methods: ['GET'] },
        { path: 'users/:userId', methods: ['GET', 'POST'] },
      ),
    ).toEqual(['GET']);
  });

  it('is empty on another path or with no method in common', () => {
    expect(
      sharedMethods({ path: 'orders', methods: ['POST'] }, { path: 'orders/new', methods: ['POST'] }),
    ).toEqual([]);
    expect(
      sharedMethods({ path: 'orders', methods: ['POST'] }, { path: 'orders', methods: ['GET'] }),
    ).toEqual([]);
    expect(
      sharedMethods({ path: 'users/:id', methods: ['GET'] }, { path: 'users/me', methods: ['GET'] }),
    ).toEqual([]);
  });
});
