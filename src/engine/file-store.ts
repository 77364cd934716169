/**
 * The types of files between steps (engine/files.ts has the rest): apart, so that the step
 * context (steps/types.ts) can name them without importing what files.ts imports.
 */
export interface FileRef {
  id: string;
  filename: string;
  mimeType: string;
  size: number;
  /** Hex sha256 of the bytes. */
  sha256: string;
}

export interface NewFile {
  filename: string;
  mimeType: string;
}

export interface FileStore {
  /**
   * The file's bytes in order, read from the store part by part as they are consumed. Fails (on
   * the first read) when no file has that id, or the stored one is not the one `ref` describes
   * (its sha256 differs: a reference cannot be made up to read another file).
   */
  open(ref: FileRef): AsyncIterable<Uint8Array>;
  /**
   * Stores `data` as a new file of execution `executionId` (deleted with it: queue/retention.ts),
   * as it arrives, hashing it on the way. More than `maxBytes` → FileTooLarge, and nothing usable
   * is kept.
   */
  create(
    executionId: string,
    meta: NewFile,
    data: AsyncIterable<Uint8Array>,
    maxBytes: number,
  ): Promise<FileRef>;
}
