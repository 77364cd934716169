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
