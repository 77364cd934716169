import { describe, expect, it } from 'vitest';
import { concurrencyErrors, concurrencyOf, keyText, newestNumber } from '../../src/engine/concurrency.js';

describe('newestNumber', () => {
  it.each([
    [1_700_000_000, 1_700_000_000],
    [-3.5, -3.5],
    ['42', 42],
    [' 7.25 ', 7.25],
    ['2026-05-01T10:00:00Z', Date.parse('2026-05-01T10:00:00Z')],
    ['2026-05-01T12:00:00+02:00', Date.parse('2026-05-01T10:00:00Z')],
    ['2026-05-01', Date.parse('2026-05-01T00:00:00Z')],
    ['2026-05-01T10:00:00.123Z', Date.parse('2026-05-01T10:00:00.123Z')],
  ])('%j → %d', (value, expected) => {
    expect(newestNumber(value)).toBe(expected);
  });

  it.each([null, undefined, true, {}, [], '', 'soon', 'May 1, 2026', Number.NaN, Number.POSITIVE_INFINITY])(
    '%j → null (never skipped)',
    (value) => {
      expect(newestNumber(value)).toBeNull();
    },
  );

  it('keeps microseconds in order', () => {
    const a = newestNumber('2026-05-01T10:00:00.000001Z')!;
    const b = newestNumber('2026-05-01T10:00:00.000002Z')!;
    expect(a).toBeLessThan(b);
    expect(Math.floor(a)).toBe(Date.parse('2026-05-01T10:00:00.000Z'));
  });
});

describe('keyText', () => {
  it.each([
    ['cus_1', 'cus_1'],
    [42, '42'],
    [{ a: 1 }, '{"a":1}'],
    [null, undefined],
    [undefined, undefined],
    ['', undefined],
  ])('%j → %j', (value, expected) => {
    expect(keyText(value)).toBe(expected);
  });

  it('a key longer than 512 characters is its sha256: equal keys stay equal', () => {
    const long = 'x'.repeat(600);
    expect(keyText(long)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(keyText(long)).toBe(keyText(`${'x'.repeat(599)}x`));
    expect(keyText(long)).not.toBe(keyText('y'.repeat(600)));
  });
});

describe('concurrencyOf', () => {
  const execution = { id: 'e1', mode: 'production', workflowId: 'wf' };
  it('evaluates the key and the value over the trigger item, with the default limit', async () => {
    const settings = { key: '{{ body.customer }}', newestWins: '{{ body.updated }}' };
    expect(await concurrencyOf(settings, { body: { customer: 'cus_1', updated: 5 } }, execution)).toEqual({
      key: 'cus_1',
      limit: 1,
      newest: 5,
    });
  });

  it('no key when it is null or its expression fails; a missing value is null', async () => {
    expect(await concurrencyOf({ key: '{{ body.nothing }}' }, { body: {} }, execution)).toBeUndefined();
    expect(await concurrencyOf({ key: '{{ $number("x") }}' }, { body: {} }, execution)).toBeUndefined();
    expect(
      await concurrencyOf({ key: 'all', limit: 3, newestWins: '{{ body.gone }}' }, { body: {} }, execution),
    ).toEqual({ key: 'all', limit: 3, newest: null });
  });

  it('names the field of an expression that does not compile', () => {
    expect(concurrencyErrors({ key: '{{ body.( }}', newestWins: '{{ ) }}' }).map((e) => e.field)).toEqual([
      '/settings/concurrency/key',
      '/settings/concurrency/newestWins',
    ]);
    expect(concurrencyErrors({ key: '{{ body.id }}' })).toEqual([]);
  });
});
