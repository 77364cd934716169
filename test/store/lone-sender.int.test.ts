/**
 * One sender's hot write is committed on the event loop at once (http/lone-sender.ts, GroupCommit.hot
 * with commitNow, SQLite's writeHotNow), durably and only when nothing else writes; from several
 * senders it goes through the writer thread's batches as before.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { executionsRepo } from '../../src/store/executions.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import { LONE_STREAK, LoneSender } from '../../src/http/lone-sender.js';
import type { NewExecutionRow } from '../../src/store/schema.js';
import { openStore } from '../../src/store/open.js';
import type { HotWrite, Store } from '../../src/store/store.js';
import { queuedRow } from './rows.js';

let dataDir: string;
let store: Store;
/** A second connection to the same file: what is committed, read without waiting for anything. */
let reader: SqliteDatabase.Database;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookflow-lone-'));
  store = await openStore(
    loadConfig({ env: { HOOKFLOW_DATA_DIR: dataDir } }).store,
    createLogger('silent', 2),
  );
  reader = new SqliteDatabase(path.join(dataDir, 'hookflow.sqlite'), { readonly: true });
});

afterAll(async () => {
  reader?.close();
  await store?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const insert = (): HotWrite & { kind: 'insert'; row: NewExecutionRow } => ({
  kind: 'insert',
  row: queuedRow(),
});

const committed = (id: string) =>
  (reader.prepare('select count(*) as n from executions where id = ?').get(id) as { n: number }).n === 1;

/** A LoneSender that has seen `count` requests in a row on one connection. */
function sawInARow(count: number): LoneSender {
  const lone = new LoneSender();
  const socket = {};
  for (let i = 0; i < count; i++) lone.saw(socket);
  return lone;
}

describe('LoneSender', () => {
  it(`counts as one sender after ${LONE_STREAK} requests in a row on one connection, and not after another's`, () => {
    const lone = new LoneSender();
    const a = {};
    for (let i = 0; i < LONE_STREAK; i++) lone.saw(a);
    expect(lone.now).toBe(false);
    lone.saw(a);
    expect(lone.now).toBe(true);
    lone.saw({});
    expect(lone.now).toBe(false);
  });
});

describe('a lone sender’s hot write', () => {
  it('is committed before hot() returns, when one sender is all there is', async () => {
    const writer = new GroupCommit({ store });
    const write = insert();
    const done = writer.hot(write, { commitNow: sawInARow(LONE_STREAK + 1).now });
    expect(committed(write.row.id)).toBe(true);
    expect(await done).toBe(true);
    expect(await executionsRepo.get(store.db, write.row.id)).toEqual(write.row);
  });

  it('waits for its batch, as before, when requests come from several connections', async () => {
    const writer = new GroupCommit({ store });
    const write = insert();
    const done = writer.hot(write, { commitNow: sawInARow(LONE_STREAK).now });
    expect(committed(write.row.id)).toBe(false);
    expect(await done).toBe(true);
    expect(committed(write.row.id)).toBe(true);
  });

  it('is not committed on the event loop while a transaction is open there, nor while a batch is in flight', async () => {
    const writeHotNow = store.writeHotNow!.bind(store);
    await store.transaction(async () => {
      expect(writeHotNow([insert()])).toBeUndefined();
    });
    const inFlight = store.writeHot([insert()]);
    expect(writeHotNow([insert()])).toBeUndefined();
    await inFlight;
    const now = insert();
    expect(writeHotNow([now])).toEqual([true]);
    expect(committed(now.row.id)).toBe(true);
  });

  it('is not committed on the event loop inside a transaction there with synchronous=NORMAL either', async () => {
    // FULL transactions on the event loop commit at NORMAL and sync the WAL afterwards (caught by
    // the check above); configured NORMAL, they are plain transactions.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookflow-lone-normal-'));
    const normal = await openStore(
      loadConfig({ env: { HOOKFLOW_DATA_DIR: dir, HOOKFLOW_SQLITE_SYNCHRONOUS: 'NORMAL' } }).store,
      createLogger('silent', 2),
    );
    try {
      await normal.transaction(async () => {
        expect(normal.writeHotNow!([insert()])).toBeUndefined();
      });
      expect(normal.writeHotNow!([insert()])).toEqual([true]);
    } finally {
      await normal.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails a duplicate as the batch path does, once', async () => {
    const writer = new GroupCommit({ store });
    const commitNow = sawInARow(LONE_STREAK + 1).now;
    const write = insert();
    expect(await writer.hot(write, { commitNow })).toBe(true);
    await expect(writer.hot({ ...write }, { commitNow })).rejects.toThrow(/UNIQUE constraint failed/);
  });
});
