/**
 * Uploaded files (raw bodies and multipart files). A file over 1 MiB is stored in parts of 1 MiB
 * in `blob_parts`, its `blobs` row holding the metadata and no bytes: SQLite copies a bound value
 * and then the record it builds from it, so inserting a 16 MiB file in one value took 32 MiB more
 * while it was stored; in parts it takes 2 MiB. Parts are views of the request body: no copy here.
 */
import type { BlobPartsTable, BlobRow, NewBlobRow } from './schema.js';
import type { Db } from './store.js';

export const BLOB_PART_BYTES = 1024 * 1024;

const EMPTY = new Uint8Array(0);

/** The row to insert into `blobs` and the parts to insert into `blob_parts`. */
export function splitBlob(row: NewBlobRow): { row: NewBlobRow; parts: BlobPartsTable[] } {
  const { data } = row;
  if (data.byteLength <= BLOB_PART_BYTES) return { row, parts: [] };
  const parts: BlobPartsTable[] = [];
  for (let at = 0, seq = 0; at < data.byteLength; at += BLOB_PART_BYTES, seq++) {
    parts.push({ blob_id: row.id, seq, data: data.subarray(at, at + BLOB_PART_BYTES) });
  }
  return { row: { ...row, data: EMPTY }, parts };
}

export const blobsRepo = {
  /** A file with all its bytes, or undefined. */
  async get(db: Db, id: string): Promise<BlobRow | undefined> {
    const row = await db.selectFrom('blobs').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row || row.data.byteLength === row.size) return row;
    const parts = await db
      .selectFrom('blob_parts')
      .select('data')
      .where('blob_id', '=', id)
      .orderBy('seq')
      .execute();
    return { ...row, data: Buffer.concat(parts.map((p) => p.data)) };
  },
};

/**
 * Reading a file part by part, and storing one as it arrives (files that steps pass on and
 * produce: engine/files.ts). A stored file is either inline (its `blobs.data` holds all of its
 * `size` bytes) or in parts of BLOB_PART_BYTES (all full but the last), `blobs.data` empty.
 */
export const blobFiles = {
  /** The file's row, its data inline or empty (never more than BLOB_PART_BYTES), or undefined. */
  async row(db: Db, id: string): Promise<BlobRow | undefined> {
    return db.selectFrom('blobs').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /** How many reads `part` takes for this row: one for an inline file, else its parts. */
  partCount(row: Pick<BlobRow, 'data' | 'size'>): number {
    if (row.data.byteLength === row.size) return 1;
    return Math.ceil(row.size / BLOB_PART_BYTES);
  },

  /** Bytes `seq` of the file (`row` as `row` read it); undefined when that part is missing. */
  async part(
    db: Db,
    row: Pick<BlobRow, 'id' | 'data' | 'size'>,
    seq: number,
  ): Promise<Uint8Array | undefined> {
    if (row.data.byteLength === row.size) return seq === 0 ? row.data : undefined;
    const part = await db
      .selectFrom('blob_parts')
      .select('data')
      .where('blob_id', '=', row.id)
      .where('seq', '=', seq)
      .executeTakeFirst();
    return part?.data;
  },

  /** The file's bytes, part by part, as they are consumed. */
  async *chunks(db: Db, row: Pick<BlobRow, 'id' | 'data' | 'size'>): AsyncGenerator<Uint8Array> {
    const count = blobFiles.partCount(row);
    for (let seq = 0; seq < count; seq++) {
      const data = await blobFiles.part(db, row, seq);
      if (!data) throw new Error(`part ${seq} of file ${row.id} is missing`);
      yield data;
    }
  },

  /**
   * A file being stored: its row first (size 0, no sha256 yet), so that its execution's
   * retention deletes whatever parts a run that stopped half-way left.
   */
  async begin(db: Db, row: Omit<NewBlobRow, 'data' | 'size' | 'sha256'>): Promise<void> {
    await db
      .insertInto('blobs')
      .values({ ...row, data: EMPTY, size: 0, sha256: '' })
      .execute();
  },

  async append(db: Db, blobId: string, seq: number, data: Uint8Array): Promise<void> {
    await db.insertInto('blob_parts').values({ blob_id: blobId, seq, data }).execute();
  },

  /** The file is complete: its size and sha256 make it readable (a reference names both). */
  async finish(db: Db, id: string, size: number, sha256: string): Promise<void> {
    await db.updateTable('blobs').set({ size, sha256 }).where('id', '=', id).execute();
  },
};
