/**
 * The engine thread's files (engine/files.ts `FileStore`): the thread has no store, so it asks the
 * event loop for each part of a file it reads and hands it each part of a file it stores, one at a
 * time (`ThreadFiles`, in the thread), and the event loop reads and writes them (`StoredFiles`).
 * One part (1 MiB) crosses at a time, moved rather than copied where it can be: a 50 MB file sent
 * on by an `http` step or stored from a response holds a few MiB in memory at most, not the file.
 */
import { createHash } from 'node:crypto';
import { type FileRef, FileTooLarge, type FileStore, fileGone, type NewFile } from '../engine/files.js';
import { newId, nowIso } from '../ids.js';
import { BLOB_PART_BYTES, blobFiles } from '../store/blobs.js';
import type { BlobRow } from '../store/schema.js';
import type { Store } from '../store/store.js';

export type FileCall =
  | { f: 'read'; id: string; sha256: string; seq: number }
  | { f: 'begin'; executionId: string; filename: string; mimeType: string }
  | { f: 'append'; id: string; seq: number; data: Uint8Array }
  | { f: 'finish'; id: string; size: number; sha256: string };

/** A read's answer: the part's bytes and whether it was the last. */
export interface ReadReply {
  data: Uint8Array;
  last: boolean;
}

export type FileReply =
  | { ok: ReadReply | string | null; error?: undefined; gone?: undefined }
  | { error: string; gone?: boolean; ok?: undefined };

/** The event loop's side: answers the engine thread's file calls from the store. */
export class StoredFiles {
  readonly #store: Store;
  /** Rows of files being read, by id (parts after the first need the row's shape, not a new read). */
  readonly #rows = new Map<string, Pick<BlobRow, 'id' | 'data' | 'size' | 'sha256'>>();

  constructor(store: Store) {
    this.#store = store;
  }

  async handle(call: FileCall): Promise<FileReply> {
    try {
      return { ok: await this.#handle(call) };
    } catch (err) {
      if (err instanceof Gone) return { error: err.message, gone: true };
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }

  async #handle(call: FileCall): Promise<ReadReply | string | null> {
    const db = this.#store.db;
    switch (call.f) {
      case 'read': {
        let row = call.seq === 0 ? undefined : this.#rows.get(call.id);
        if (!row) {
          const found = await blobFiles.row(db, call.id);
          // A file being stored has no sha256 yet: no reference names it.
          if (!found || found.sha256 !== call.sha256) throw new Gone();
          row = { id: found.id, data: found.data, size: found.size, sha256: found.sha256 };
          if (blobFiles.partCount(row) > 1) this.#rows.set(call.id, row);
        }
        const count = blobFiles.partCount(row);
        const data = await blobFiles.part(db, row, call.seq);
        if (!data) throw new Gone();
        const last = call.seq >= count - 1;
        if (last) this.#rows.delete(call.id);
        return { data, last };
      }
      case 'begin': {
        const id = newId();
        await blobFiles.begin(db, {
          id,
          execution_id: call.executionId,
          filename: call.filename,
          mime_type: call.mimeType,
          created_at: nowIso(),
        });
        return id;
      }
      case 'append':
        await blobFiles.append(db, call.id, call.seq, call.data);
        return null;
      case 'finish':
        await blobFiles.finish(db, call.id, call.size, call.sha256);
        return null;
    }
  }
}

class Gone extends Error {}

/** The engine thread's side: a FileStore whose calls are posted to the event loop (`send`). */
export class ThreadFiles implements FileStore {
  readonly #send: (call: FileCall, transfer?: ArrayBuffer[]) => Promise<FileReply>;

  constructor(send: (call: FileCall, transfer?: ArrayBuffer[]) => Promise<FileReply>) {
    this.#send = send;
  }

  async #call(call: FileCall, ref?: Pick<FileRef, 'id' | 'filename'>, transfer?: ArrayBuffer[]) {
    const reply = await this.#send(call, transfer);
    if (reply.error !== undefined) {
      if (reply.gone && ref) throw fileGone(ref);
      throw new Error(`The file store failed: ${reply.error}`);
    }
    return reply.ok;
  }

  async *open(ref: FileRef): AsyncIterable<Uint8Array> {
    for (let seq = 0; ; seq++) {
      const part = (await this.#call({ f: 'read', id: ref.id, sha256: ref.sha256, seq }, ref)) as ReadReply;
      yield part.data;
      if (part.last) return;
    }
  }

  async create(
    executionId: string,
    meta: NewFile,
    data: AsyncIterable<Uint8Array>,
    maxBytes: number,
  ): Promise<FileRef> {
    const id = (await this.#call({
      f: 'begin',
      executionId,
      filename: meta.filename,
      mimeType: meta.mimeType,
    })) as string;
    const hash = createHash('sha256');
    let size = 0;
    let seq = 0;
    // Parts are exactly BLOB_PART_BYTES but the last (store/blobs.ts counts them so).
    let part = Buffer.allocUnsafe(BLOB_PART_BYTES);
    let filled = 0;
    const flush = async () => {
      const bytes = part.subarray(0, filled);
      // Moved, not copied: a fresh buffer takes its place.
      await this.#call({ f: 'append', id, seq: seq++, data: bytes }, undefined, [part.buffer as ArrayBuffer]);
      part = Buffer.allocUnsafe(BLOB_PART_BYTES);
      filled = 0;
    };
    for await (const chunk of data) {
      size += chunk.byteLength;
      if (size > maxBytes) throw new FileTooLarge(maxBytes);
      hash.update(chunk);
      let at = 0;
      while (at < chunk.byteLength) {
        const n = Math.min(BLOB_PART_BYTES - filled, chunk.byteLength - at);
        part.set(chunk.subarray(at, at + n), filled);
        filled += n;
        at += n;
        if (filled === BLOB_PART_BYTES) await flush();
      }
    }
    if (filled > 0) await flush();
    const sha256 = hash.digest('hex');
    await this.#call({ f: 'finish', id, size, sha256 });
    return { id, filename: meta.filename, mimeType: meta.mimeType, size, sha256 };
  }
}
