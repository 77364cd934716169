/**
 * The data store's repository (store/data-store.ts), part of the store contract (contract.ts):
 * the same cases on SQLite and PostgreSQL, so the one-statement `increment` and `setIfAbsent`
 * behave alike on both.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { type DataAddress, dataStoreRepo } from '../../src/store/data-store.js';
import type { Store } from '../../src/store/store.js';

const iso = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();
const at = (key: string, scope: DataAddress['scope'] = 'global', workflowId = ''): DataAddress => ({
  scope,
  workflowId,
  key,
});

export function dataStoreContract(store: () => Store): void {
  describe('dataStoreRepo', () => {
    beforeEach(async () => {
      await store().db.deleteFrom('data_store').execute();
    });

    it('sets, gets and deletes an entry; scopes and workflows keep their own keys', async () => {
      const db = store().db;
      const now = iso();
      await dataStoreRepo.set(db, at('k'), { a: 1 }, '{"a":1}', null, now);
      await dataStoreRepo.set(db, at('k', 'workflow', 'w1'), 'one', '"one"', null, now);
      await dataStoreRepo.set(db, at('k', 'workflow', 'w2'), 'two', '"two"', null, now);
      expect((await dataStoreRepo.get(db, at('k'), now))?.value).toBe('{"a":1}');
      expect((await dataStoreRepo.get(db, at('k', 'workflow', 'w1'), now))?.value).toBe('"one"');
      expect((await dataStoreRepo.get(db, at('k', 'workflow', 'w2'), now))?.value).toBe('"two"');
      expect(await dataStoreRepo.delete(db, at('k', 'workflow', 'w1'), now)).toBe(true);
      expect(await dataStoreRepo.delete(db, at('k', 'workflow', 'w1'), now)).toBe(false);
      expect(await dataStoreRepo.get(db, at('k', 'workflow', 'w1'), now)).toBeUndefined();
      expect((await dataStoreRepo.get(db, at('k'), now))?.value).toBe('{"a":1}');
    });

    it('an expired entry is gone for get, delete, setIfAbsent and increment, and the sweep deletes it', async () => {
      const db = store().db;
      const past = iso(-1_000);
      await dataStoreRepo.set(db, at('gone'), 5, '5', past, iso(-2_000));
      const now = iso();
      expect(await dataStoreRepo.get(db, at('gone'), now)).toBeUndefined();
      expect(await dataStoreRepo.increment(db, at('gone'), 2, null, now)).toBe(2);
      await dataStoreRepo.set(db, at('gone'), 'x', '"x"', past, iso(-2_000));
      expect(await dataStoreRepo.setIfAbsent(db, at('gone'), 'y', '"y"', null, now)).toEqual({
        set: true,
        value: '"y"',
      });
      await dataStoreRepo.set(db, at('gone'), 'x', '"x"', past, iso(-2_000));
      expect(await dataStoreRepo.delete(db, at('gone'), now)).toBe(false);
      await dataStoreRepo.set(db, at('a'), 1, '1', past, iso(-2_000));
      await dataStoreRepo.set(db, at('b'), 1, '1', null, now);
      expect(await dataStoreRepo.sweep(db, now)).toBe(1);
      expect(await db.selectFrom('data_store').select('key').execute()).toEqual([{ key: 'b' }]);
    });

    it('setIfAbsent writes once and answers the stored value to the others', async () => {
      const db = store().db;
      const now = iso();
      expect(await dataStoreRepo.setIfAbsent(db, at('order:1'), 1, '1', null, now)).toEqual({
        set: true,
        value: '1',
      });
      expect(await dataStoreRepo.setIfAbsent(db, at('order:1'), 2, '2', null, now)).toEqual({
        set: false,
        value: '1',
      });
    });

    it('50 concurrent setIfAbsent on one key: exactly one sets', async () => {
      const s = store();
      const now = iso();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          dataStoreRepo.setIfAbsent(s.db, at('race'), i, String(i), null, now),
        ),
      );
      const winners = results.filter((r) => r.set);
      expect(winners).toHaveLength(1);
      for (const r of results) expect(r.value).toBe(winners[0]!.value);
    });

    it('200 concurrent increments add up exactly; a non-number is left alone', async () => {
      const db = store().db;
      const now = iso();
      await Promise.all(
        Array.from({ length: 200 }, () => dataStoreRepo.increment(db, at('count'), 1, null, now)),
      );
      expect(JSON.parse((await dataStoreRepo.get(db, at('count'), now))!.value)).toBe(200);
      expect(await dataStoreRepo.increment(db, at('count'), -0.5, null, now)).toBe(199.5);
      await dataStoreRepo.set(db, at('text'), 'abc', '"abc"', null, now);
      expect(await dataStoreRepo.increment(db, at('text'), 1, null, now)).toBeUndefined();
      expect((await dataStoreRepo.get(db, at('text'), now))?.value).toBe('"abc"');
    });

    it('increment keeps the expiry of the entry it adds to', async () => {
      const db = store().db;
      const now = iso();
      const later = iso(60_000);
      expect(await dataStoreRepo.increment(db, at('window'), 1, later, now)).toBe(1);
      expect(await dataStoreRepo.increment(db, at('window'), 1, iso(120_000), now)).toBe(2);
      expect((await dataStoreRepo.get(db, at('window'), now))?.expiresAt).toBe(later);
    });

    it('lists live entries by prefix, in key order, a page after a key', async () => {
      const db = store().db;
      const now = iso();
      for (const key of ['order:2', 'order:1', 'order_3', 'other', 'ORDER:4'])
        await dataStoreRepo.set(db, at(key), key, JSON.stringify(key), null, now);
      await dataStoreRepo.set(db, at('order:0'), 0, '0', iso(-5_000), iso(-6_000));
      const page = await dataStoreRepo.list(
        db,
        { scope: 'global', workflowId: '', prefix: 'order:' },
        10,
        now,
      );
      expect(page.map((e) => e.key)).toEqual(['order:1', 'order:2']);
      const after = await dataStoreRepo.list(
        db,
        { scope: 'global', workflowId: '', prefix: 'order', after: 'order:2' },
        10,
        now,
      );
      expect(after.map((e) => e.key)).toEqual(['order_3']);
    });
  });
}
