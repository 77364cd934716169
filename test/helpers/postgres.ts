/**
 * A fresh PostgreSQL database per test file on the machine's server (127.0.0.1:5432, trust auth
 * by default; HOOKFLOW_TEST_PG_URL overrides the admin connection). Dropped again on close.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.HOOKFLOW_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `hookflow_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: PG_ADMIN_URL });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Ends `pool` (by `end`: pool.end(), or Kysely's destroy() of a dialect holding it) and waits until
 * its connections are closed. pg-pool's end() resolves once it has asked its idle clients to end,
 * before their sockets close; a `drop database … with (force)` right after can reach their backends
 * first, and the 57P01 error they then send comes out of the pool as an 'error' event no one
 * listens to: an uncaught exception in the test process, blamed on whichever file was running.
 */
export async function endPool(pool: pg.Pool, end: () => Promise<unknown> = () => pool.end()): Promise<void> {
  let open = pool.totalCount;
  const closed = new Promise<void>((resolve) => {
    if (open === 0) resolve();
    pool.on('remove', () => {
      if (--open === 0) resolve();
    });
  });
  await end();
  await closed;
}
