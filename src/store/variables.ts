/** Variables rows (SPEC 7e). A secret one's `value` is sealed; the store never sees it in clear. */
import type { VariableRow } from './schema.js';
import type { Db } from './store.js';

export const variablesRepo = {
  /** Every variable, by name. */
  async list(db: Db): Promise<VariableRow[]> {
    return db.selectFrom('variables').selectAll().orderBy('name').execute();
  },

  async get(db: Db, name: string): Promise<VariableRow | undefined> {
    return db.selectFrom('variables').selectAll().where('name', '=', name).executeTakeFirst();
  },

  /** Inserts the row, or replaces the value of the one of that name (its created_at kept). */
  async put(db: Db, row: VariableRow): Promise<void> {
    await db
      .insertInto('variables')
      .values(row)
      .onConflict((oc) =>
        oc.column('name').doUpdateSet({ value: row.value, secret: row.secret, updated_at: row.updated_at }),
      )
      .execute();
  },

  async delete(db: Db, name: string): Promise<boolean> {
    const res = await db.deleteFrom('variables').where('name', '=', name).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  },

  /** The sealed values (`hookflow secrets rotate`). */
  async listSecret(db: Db): Promise<{ name: string; value: string }[]> {
    return db.selectFrom('variables').select(['name', 'value']).where('secret', '=', 1).execute();
  },

  async setValue(db: Db, name: string, value: string): Promise<void> {
    await db.updateTable('variables').set({ value }).where('name', '=', name).execute();
  },
};
