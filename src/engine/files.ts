/**
 * Files between steps (SPEC 7e). A file reference `{id, filename, mimeType, size, sha256}` is what
 * steps pass around: the trigger's `files[]` (stored when the request was accepted), or the
 * `file` of an `http` step with `responseType: "file"`. The bytes stay in the store
 * (`blobs`/`blob_parts`, parts of 1 MiB); steps stream them from there (`FileStore.open`) and
 * store what they receive as it arrives (`FileStore.create`), so a file is never copied into an
 * execution's record nor held whole in memory.
 *
 * The engine knows no database: whoever runs it hands it a FileStore (EngineOptions.files). On the
 * executor's engine thread that is a channel to the event loop, which reads and writes the parts
 * (queue/engine-files.ts); a test may hand it one in memory.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FileRef, FileStore, NewFile } from './file-store.js';
import { StepFailure } from './steps/types.js';

export type { FileRef, FileStore, NewFile } from './file-store.js';

export class FileTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`The file is larger than ${maxBytes} bytes.`);
    this.name = 'FileTooLarge';
  }
}

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * `value` as a file reference when it is one: an object with a string `id`, `filename`,
 * `mimeType`, a non-negative integer `size` and a hex `sha256` (other keys, such as a trigger
 * file's `field`, are allowed and ignored). Undefined otherwise.
 */
export function asFileRef(value: unknown): FileRef | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (
    typeof v.id !== 'string' ||
    v.id === '' ||
    typeof v.filename !== 'string' ||
    typeof v.mimeType !== 'string' ||
    typeof v.size !== 'number' ||
    !Number.isSafeInteger(v.size) ||
    v.size < 0 ||
    typeof v.sha256 !== 'string' ||
    !SHA256.test(v.sha256)
  )
    return undefined;
  return { id: v.id, filename: v.filename, mimeType: v.mimeType, size: v.size, sha256: v.sha256 };
}

/** The file reference at `field` of a step, or a StepFailure saying what is there instead. */
export function fileRefAt(value: unknown, field: string): FileRef {
  const ref = asFileRef(value);
  if (ref) return ref;
  throw new StepFailure(
    `${field} is not a file reference ({id, filename, mimeType, size, sha256}: an item of $trigger.files, or the "file" of an http step with responseType "file").`,
    { field },
  );
}

/**
 * A file's bytes as a Node stream (what HTTP clients and mailers take), read from the store as the
 * stream is consumed. `files` undefined (an engine run without a store): a StepFailure at once.
 */
export function openFile(files: FileStore | undefined, ref: FileRef, field: string): Readable {
  if (!files)
    throw new StepFailure('Files cannot be read here: this engine runs without a file store.', { field });
  return Readable.from(files.open(ref), { objectMode: false });
}

/** A FileStore in memory (tests, and engines run without a database). */
export class MemoryFiles implements FileStore {
  readonly files = new Map<string, { ref: FileRef; executionId: string | null; data: Buffer }>();
  #seq = 0;

  /** Adds a file as if it had been uploaded (no execution owns it). */
  add(meta: NewFile, data: Buffer): FileRef {
    const ref: FileRef = {
      id: `mem-${++this.#seq}`,
      ...meta,
      size: data.length,
      sha256: createHash('sha256').update(data).digest('hex'),
    };
    this.files.set(ref.id, { ref, executionId: null, data });
    return ref;
  }

  async *open(ref: FileRef): AsyncIterable<Uint8Array> {
    const file = this.files.get(ref.id);
    if (!file || file.ref.sha256 !== ref.sha256) throw fileGone(ref);
    yield file.data;
  }

  async create(
    executionId: string,
    meta: NewFile,
    data: AsyncIterable<Uint8Array>,
    maxBytes: number,
  ): Promise<FileRef> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of data) {
      size += chunk.byteLength;
      if (size > maxBytes) throw new FileTooLarge(maxBytes);
      chunks.push(Buffer.from(chunk));
    }
    const ref = this.add(meta, Buffer.concat(chunks));
    this.files.get(ref.id)!.executionId = executionId;
    return ref;
  }
}

/** The error a reference to a file that is not (or no longer) stored fails with. */
export function fileGone(ref: Pick<FileRef, 'id' | 'filename'>): StepFailure {
  return new StepFailure(
    `File "${ref.filename}" (${ref.id}) is not stored (any more): the execution it belonged to may have been deleted by retention, or the reference was changed.`,
  );
}
