/**
 * The data store's entries (SPEC 7f `store` step and /api/v1/store; the service is
 * executions/data-store.ts): JSON values by scope (`global`, or a workflow's) and key, each with an
 * optional expiry. An entry past `expires_at` is gone: every read and write here treats it as
 * absent, and `sweep` deletes such rows.
 *
 * `increment` and `setIfAbsent` are one `INSERT … ON CONFLICT … DO UPDATE … RETURNING` each, so
 * they are atomic however many processes share the store: PostgreSQL locks the row for the
 * conflict's update (a concurrent one waits and sees the result), SQLite has one writer. Never a
 * read and then a write.
 */
import { sql } from 'kysely';
import { newId } from '../ids.js';
import type { DataStoreTable } from './schema.js';
import type { Db } from './store.js';

export type DataScope = DataStoreTable['scope'];

/** Where an entry lives: its scope and, for `workflow`, the workflow's id. */
export interface DataAddress {
  scope: DataScope;
  workflowId: string;
  key: string;
}

export interface DataEntry {
  key: string;
  /** JSON text. */
  value: string;
  expiresAt: string | null;
  updatedAt: string;
}

const ns = ({ scope, workflowId }: Pick<DataAddress, 'scope' | 'workflowId'>) =>
  scope === 'global' ? '' : workflowId;

/** The JSON number a value holds, when it is one (what `increment` adds to). */
const numberOf = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;

/** `expires_at` is past at `now` (SQL, over the table's current row). */
const expired = (now: string) =>
  sql<boolean>`(data_store.expires_at is not null and data_store.expires_at <= ${now})`;

export const dataStoreRepo = {
  /** The entry, unless absent or expired at `now`. */
  async get(db: Db, at: DataAddress, now: string): Promise<DataEntry | undefined> {
    const row = await db
      .selectFrom('data_store')
      .select(['key', 'value', 'expires_at', 'updated_at'])
      .where('scope', '=', at.scope)
      .where('workflow_id', '=', ns(at))
      .where('key', '=', at.key)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirst();
    return row && { key: row.key, value: row.value, expiresAt: row.expires_at, updatedAt: row.updated_at };
  },

  /** Writes the entry (replacing one there, expired or not). `value` is the parsed value, `json` its text. */
  async set(db: Db, at: DataAddress, value: unknown, json: string, expiresAt: string | null, now: string) {
    await db
      .insertInto('data_store')
      .values({
        scope: at.scope,
        workflow_id: ns(at),
        key: at.key,
        value: json,
        num: numberOf(value),
        token: newId(),
        expires_at: expiresAt,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.columns(['scope', 'workflow_id', 'key']).doUpdateSet((eb) => ({
          value: eb.ref('excluded.value'),
          num: eb.ref('excluded.num'),
          token: eb.ref('excluded.token'),
          expires_at: eb.ref('excluded.expires_at'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  },

  /**
   * Writes the entry only when there is none (or only an expired one), in one statement. Every
   * conflict updates the row (to itself, when it stays), so RETURNING always answers: the entry
   * as it is now, and whether it is this call's write (its token).
   */
  async setIfAbsent(
    db: Db,
    at: DataAddress,
    value: unknown,
    json: string,
    expiresAt: string | null,
    now: string,
  ): Promise<{ set: boolean; value: string }> {
    const token = newId();
    const gone = expired(now);
    const row = await db
      .insertInto('data_store')
      .values({
        scope: at.scope,
        workflow_id: ns(at),
        key: at.key,
        value: json,
        num: numberOf(value),
        token,
        expires_at: expiresAt,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.columns(['scope', 'workflow_id', 'key']).doUpdateSet({
          value: sql`case when ${gone} then excluded.value else data_store.value end`,
          num: sql`case when ${gone} then excluded.num else data_store.num end`,
          token: sql`case when ${gone} then excluded.token else data_store.token end`,
          expires_at: sql`case when ${gone} then excluded.expires_at else data_store.expires_at end`,
          created_at: sql`case when ${gone} then excluded.created_at else data_store.created_at end`,
          updated_at: sql`case when ${gone} then excluded.updated_at else data_store.updated_at end`,
        }),
      )
      .returning(['value', 'token'])
      .executeTakeFirstOrThrow();
    return { set: row.token === token, value: row.value };
  },

  /**
   * Adds `by` to a number entry, or creates it as `by` (with `expiresAt`) when absent or expired,
   * in one statement; an entry that stays keeps its expiry. Returns the new number, or undefined
   * when the entry holds something other than a number (then it is left as it is).
   */
  async increment(
    db: Db,
    at: DataAddress,
    by: number,
    expiresAt: string | null,
    now: string,
  ): Promise<number | undefined> {
    const gone = expired(now);
    const row = await db
      .insertInto('data_store')
      .values({
        scope: at.scope,
        workflow_id: ns(at),
        key: at.key,
        value: JSON.stringify(by),
        num: by,
        token: newId(),
        expires_at: expiresAt,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc
          .columns(['scope', 'workflow_id', 'key'])
          .doUpdateSet({
            // The number is kept as a double; its text (`6` on PostgreSQL, `6.0` on SQLite) is JSON either way.
            num: sql`case when ${gone} then excluded.num else data_store.num + excluded.num end`,
            value: sql`case when ${gone} then excluded.value else cast(data_store.num + excluded.num as text) end`,
            token: sql`excluded.token`,
            expires_at: sql`case when ${gone} then excluded.expires_at else data_store.expires_at end`,
            created_at: sql`case when ${gone} then excluded.created_at else data_store.created_at end`,
            updated_at: sql`excluded.updated_at`,
          })
          .where(sql<boolean>`(${gone} or data_store.num is not null)`),
      )
      .returning('num')
      .executeTakeFirst();
    return row?.num == null ? undefined : Number(row.num);
  },

  /** Deletes the entry; whether one was there (an expired one was not). */
  async delete(db: Db, at: DataAddress, now: string): Promise<boolean> {
    const rows = await db
      .deleteFrom('data_store')
      .where('scope', '=', at.scope)
      .where('workflow_id', '=', ns(at))
      .where('key', '=', at.key)
      .returning('expires_at')
      .execute();
    return rows.some((r) => r.expires_at === null || r.expires_at > now);
  },

  /**
   * A page of a scope's live entries whose keys start with `prefix`, by key, after the key
   * `after` (the cursor).
   */
  async list(
    db: Db,
    where: { scope: DataScope; workflowId: string; prefix?: string | undefined; after?: string | undefined },
    limit: number,
    now: string,
  ): Promise<DataEntry[]> {
    let q = db
      .selectFrom('data_store')
      .select(['key', 'value', 'expires_at', 'updated_at'])
      .where('scope', '=', where.scope)
      .where('workflow_id', '=', ns(where))
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
    // substr rather than LIKE (whose `%` and `_` a key may hold, and which SQLite compares
    // case-insensitively) or a key range (whose upper bound depends on PostgreSQL's collation).
    if (where.prefix)
      q = q.where(sql<boolean>`substr(key, 1, length(cast(${where.prefix} as text))) = ${where.prefix}`);
    if (where.after !== undefined) q = q.where('key', '>', where.after);
    const rows = await q.orderBy('key').limit(limit).execute();
    return rows.map((r) => ({
      key: r.key,
      value: r.value,
      expiresAt: r.expires_at,
      updatedAt: r.updated_at,
    }));
  },

  /** Deletes the entries expired at `now` (by the `expires_at` index); how many. */
  async sweep(db: Db, now: string): Promise<number> {
    const result = await db
      .deleteFrom('data_store')
      .where('expires_at', 'is not', null)
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
