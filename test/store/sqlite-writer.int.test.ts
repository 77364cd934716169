/**
 * The SQLite writer thread (src/store/sqlite/writer.ts): hot writes are committed by the thread's
 * own connection and seen at once by the event loop's; when the thread cannot run, writes go to
 * the fallback instead of failing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { executionsRepo } from '../../src/store/executions.js';
import { queuedRow as row } from './rows.js';
import { SqliteWriter } from '../../src/store/sqlite/writer.js';
import { openStore } from '../../src/store/open.js';
import type { HotWrite, Store } from '../../src/store/store.js';

let dataDir: string;
let store: Store;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookflow-writer-'));
  store = await openStore(
    loadConfig({ env: { HOOKFLOW_DATA_DIR: dataDir } }).store,
    createLogger('silent', 2),
  );
});

afterAll(async () => {
  await store?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('SQLite writer thread', () => {
  it('commits batches sent back to back, in order, each visible to the main connection once resolved', async () => {
    const rows = Array.from({ length: 30 }, row);
    const done = await Promise.all(
      [0, 10, 20].map((from) =>
        store.writeHot(rows.slice(from, from + 10).map((r): HotWrite => ({ kind: 'insert', row: r }))),
      ),
    );
    expect(done.flat()).toEqual(Array(30).fill(true));
    for (const r of rows) expect(await executionsRepo.get(store.db, r.id)).toEqual(r);
  });

  it('a transaction that reads, then writes after the writer thread committed, waits for the lock instead of failing', async () => {
    // A deferred BEGIN would read from a snapshot that the thread's commit makes stale, and the
    // write then fails at once with SQLITE_BUSY_SNAPSHOT (an API call answered 503 while
    // executions were being recorded). BEGIN IMMEDIATE takes the write lock first.
    const mine = row();
    const theirs = row();
    let committed: Promise<boolean[]> | undefined;
    await store.transaction(async (trx) => {
      await trx.selectFrom('executions').select('id').limit(1).execute();
      // The thread's connection commits meanwhile (or waits for our lock, if we hold it).
      committed = store.writeHot([{ kind: 'insert', row: theirs }]);
      await new Promise((r) => setTimeout(r, 50));
      await trx.insertInto('executions').values(mine).execute();
    });
    expect(await committed).toEqual([true]);
    expect(await executionsRepo.get(store.db, mine.id)).toEqual(mine);
    expect(await executionsRepo.get(store.db, theirs.id)).toEqual(theirs);
  });

  it('writes through the fallback when the thread cannot run', async () => {
    const fallbackCalls: HotWrite[][] = [];
    const writer = new SqliteWriter({
      // The thread fails to open a database in a directory that does not exist, and exits.
      file: path.join(dataDir, 'missing', 'nowhere.sqlite'),
      synchronous: 'FULL',
      fallback: async (writes) => {
        fallbackCalls.push([...writes]);
        return store.writeHot(writes);
      },
    });
    try {
      const r = row();
      const results = await writer.write([{ kind: 'insert', row: r }]).catch(async () => {
        // Sent before the thread died: failed, as group commit expects, and sent again.
        return writer.write([{ kind: 'insert', row: r }]);
      });
      expect(results).toEqual([true]);
      expect(fallbackCalls).toHaveLength(1);
      expect(await executionsRepo.get(store.db, r.id)).toEqual(r);
    } finally {
      await writer.close();
    }
  });
});
