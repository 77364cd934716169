/**
 * The SQLite side of `hookflow backup` and `hookflow restore` (cli/backup.ts): an online snapshot
 * of the store with SQLite's backup API, and what a snapshot holds (its schema version, counts and
 * stored files, each file's bytes checked against the sha256 recorded when it was received).
 *
 * Stored files (uploads, raw bodies) are rows of the store (`blobs`, `blob_parts`; store/blobs.ts),
 * not files beside it: the snapshot holds every file its executions reference, as of the same
 * instant, so retention deleting an execution (and its files) while a backup runs cannot leave a
 * reference without its file.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import type { DialectCapabilities } from '../store.js';
import { migrationProvider } from '../migrations/index.js';
import { SQLITE_FILE } from './store.js';

export { SQLITE_FILE };

/** As many pages as a step may copy: the whole database in one step (see snapshotSqlite). */
const ALL_PAGES = 0x7fffffff;

export interface SnapshotCounts {
  workflows: number;
  executions: number;
  credentials: number;
  files: number;
}

export interface StoredFile {
  id: string;
  executionId: string | null;
  size: number;
  /** sha256 (hex) of the bytes as read from the snapshot. */
  sha256: string;
  /** The sha256 recorded when the file was received, when the bytes no longer match it. */
  recordedSha256?: string;
}

export interface SnapshotFacts {
  /** The name of the latest migration applied to the snapshot (e.g. `0013_checkpoint_parts`). */
  schemaVersion: string;
  counts: SnapshotCounts;
  files: StoredFile[];
  /** One sealed credential value (to tell whether a key opens the snapshot's secrets), if any. */
  sealedSample: string | undefined;
}

/**
 * Copies the data dir's database to `dest` while hookflow may be writing to it. The copy is one
 * backup step: SQLite restarts a backup whose source another connection changed between steps,
 * and under a steady stream of webhooks (a commit every few milliseconds) a backup in steps of 100
 * pages never finished. One step reads the whole database inside one read transaction (WAL: the
 * server's writers go on meanwhile), so the copy is exactly the committed state when it began.
 * The copy is then switched out of WAL mode, so that it is one self-contained file.
 */
export async function snapshotSqlite(
  dataDir: string,
  dest: string,
): Promise<{ pages: number; bytes: number }> {
  const source = new SqliteDatabase(path.join(dataDir, SQLITE_FILE), { readonly: true, fileMustExist: true });
  try {
    source.pragma('busy_timeout = 5000');
    const pageSize = source.pragma('page_size', { simple: true }) as number;
    const result = await source.backup(dest, { progress: () => ALL_PAGES });
    const copy = new SqliteDatabase(dest);
    try {
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    return { pages: result.totalPages, bytes: result.totalPages * pageSize };
  } finally {
    source.close();
  }
}

/**
 * What a snapshot file holds. `onFileBytes` is told the bytes read so far while the files are
 * checked (progress). Throws when the file is not a sound SQLite database of hookflow's.
 */
export function inspectSnapshot(file: string, onFileBytes?: (bytes: number) => void): SnapshotFacts {
  const db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`the database fails SQLite's quick_check: ${String(check)}`);
    const migration = db.prepare('select name from hookflow_migrations order by name desc limit 1').get() as
      | { name: string }
      | undefined;
    if (!migration) throw new Error('the database has no hookflow migrations');
    const count = (table: string) =>
      (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    const files: StoredFile[] = [];
    const parts = db.prepare('select data from blob_parts where blob_id = ? order by seq');
    let read = 0;
    for (const row of db
      .prepare('select id, execution_id, sha256, size, data from blobs order by id')
      .iterate() as IterableIterator<{
      id: string;
      execution_id: string | null;
      sha256: string;
      size: number;
      data: Buffer;
    }>) {
      const hash = createHash('sha256');
      let size = 0;
      // A file over 1 MiB keeps its bytes in parts and none in its row (store/blobs.ts).
      const chunks =
        row.data.byteLength === row.size
          ? [row.data]
          : [row.data, ...(parts.all(row.id) as { data: Buffer }[]).map((p) => p.data)];
      for (const chunk of chunks) {
        hash.update(chunk);
        size += chunk.byteLength;
      }
      read += size;
      onFileBytes?.(read);
      const sha256 = hash.digest('hex');
      files.push({
        id: row.id,
        executionId: row.execution_id,
        size,
        sha256,
        ...(sha256 !== row.sha256 || size !== row.size ? { recordedSha256: row.sha256 } : {}),
      });
    }
    const sample = db.prepare('select data from credentials limit 1').get() as { data: string } | undefined;
    return {
      schemaVersion: migration.name,
      counts: {
        workflows: count('workflows'),
        executions: count('executions'),
        credentials: count('credentials'),
        files: files.length,
      },
      files,
      sealedSample: sample?.data,
    };
  } finally {
    db.close();
  }
}

/** The migrations this hookflow knows, oldest first (a snapshot from a newer one has others). */
export async function knownMigrations(): Promise<string[]> {
  const caps: DialectCapabilities = { name: 'sqlite', binaryType: 'blob', skipLocked: false, shared: false };
  return Object.keys(await migrationProvider(caps).getMigrations()).sort();
}
