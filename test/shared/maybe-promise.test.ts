import { describe, expect, it } from 'vitest';
import { andThen, isPromise, type MaybePromise } from '../../src/shared/maybe-promise.js';

const boom = new Error('boom');

describe('isPromise', () => {
  it.each([
    ['a promise', () => Promise.resolve(1), true],
    ['a number', () => 1, false],
    ['undefined', () => undefined, false],
    ['an object with a then field (JSON data)', () => ({ then: 'no' }), false],
  ])('%s → %s', (_, value, expected) => {
    expect(isPromise(value() as MaybePromise<unknown>)).toBe(expected);
  });
});

describe('andThen', () => {
  it('applies its callback now to a plain value: no promise, no microtask turn', () => {
    const result = andThen(2, (x) => x * 3);
    expect(result).toBe(6);
  });

  it('chains on a promise', async () => {
    const result = andThen(Promise.resolve(2), (x) => x * 3);
    expect(isPromise(result)).toBe(true);
    await expect(result).resolves.toBe(6);
  });

  it('answers with what the callback answers, plain or promise', async () => {
    await expect(andThen(2, (x) => Promise.resolve(x + 1))).resolves.toBe(3);
  });

  it.each([
    [
      'a plain value, the callback throwing',
      () =>
        andThen(1, () => {
          throw boom;
        }),
    ],
    [
      'a promise, the callback throwing',
      () =>
        andThen(Promise.resolve(1), () => {
          throw boom;
        }),
    ],
    ['a rejected promise', () => andThen(Promise.reject(boom), () => 1)],
  ])('rejects, never throws, without onError: %s', async (_, call) => {
    let result: MaybePromise<unknown> | undefined;
    expect(() => {
      result = call();
    }).not.toThrow();
    expect(isPromise(result)).toBe(true);
    await expect(result).rejects.toBe(boom);
  });

  it.each([
    [
      'a plain value, the callback throwing',
      () =>
        andThen<number, string>(
          1,
          () => {
            throw boom;
          },
          (e) => `caught ${(e as Error).message}`,
        ),
      false,
    ],
    [
      'a promise, the callback throwing',
      () =>
        andThen<number, string>(
          Promise.resolve(1),
          () => {
            throw boom;
          },
          (e) => `caught ${(e as Error).message}`,
        ),
      true,
    ],
    [
      'a rejected promise',
      () =>
        andThen<number, string>(
          Promise.reject(boom),
          () => 'no',
          (e) => `caught ${(e as Error).message}`,
        ),
      true,
    ],
  ])('hands the error to onError the same way: %s', async (_, call, async) => {
    const result = call();
    expect(isPromise(result)).toBe(async);
    expect(await result).toBe('caught boom');
  });

  it('hands a rejection of what the callback answers to onError too', async () => {
    const result = andThen(
      1,
      () => Promise.reject(boom),
      (e) => `caught ${(e as Error).message}`,
    );
    expect(await result).toBe('caught boom');
  });

  it('rejects with what onError throws', async () => {
    const again = new Error('again');
    const result = andThen(
      1,
      () => {
        throw boom;
      },
      () => {
        throw again;
      },
    );
    await expect(result).rejects.toBe(again);
  });
});
