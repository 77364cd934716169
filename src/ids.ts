import { v7 as uuidv7 } from 'uuid';
import { AppError } from './errors.js';

/** Time-ordered ids (UUIDv7): newest-first lists and cursors page by id alone. */
export const newId = (): string => uuidv7();

export const nowIso = (): string => new Date().toISOString();

/** Opaque list cursors: base64url of the last id seen. */
export const encodeCursor = (id: string): string => Buffer.from(id, 'utf8').toString('base64url');

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (/^[0-9a-f-]{36}$/.test(id)) return id;
  throw new AppError('validation_failed', 'The cursor is not one this API handed out.', {
    hint: 'Pass the nextCursor value of the previous page unchanged, or omit cursor to start from the top.',
    fields: [{ field: '/cursor', message: 'unknown cursor' }],
  });
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Rows fetched with limit + 1: the extra row only says whether there is a next page. */
export function toPage<R extends { id: string }, T>(rows: R[], limit: number, map: (row: R) => T): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(map), nextCursor: more && last ? encodeCursor(last.id) : null };
}
