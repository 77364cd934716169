/**
 * The data store (SPEC 7f) as the `store` step and /api/v1/store use it: limits checked, values
 * parsed and serialised, expiries computed; the statements are store/data-store.ts. A sweep deletes
 * expired entries every minute (reads ignore them before that: an expired entry is gone at once);
 * on PostgreSQL every process sweeps, which is harmless (a delete of rows already deleted).
 */
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { DataStoreAnswer, DataStoreRequest } from '../engine/services.js';
import { ServiceRefusal } from '../engine/services.js';
import { type DataAddress, type DataEntry, dataStoreRepo, type DataScope } from '../store/data-store.js';
import type { Store } from '../store/store.js';
import { DATA_TTL_MAX_SECONDS, dataKeyProblem, dataValueJson } from '../shared/data-store.js';

const SWEEP_MS = 60_000;

export interface DataEntryView {
  key: string;
  value: unknown;
  expiresAt: string | null;
  updatedAt: string;
}

const view = (e: DataEntry): DataEntryView => ({
  key: e.key,
  value: JSON.parse(e.value) as unknown,
  expiresAt: e.expiresAt,
  updatedAt: e.updatedAt,
});

export class DataStore {
  readonly #store: Store;
  readonly #log: Logger;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;

  constructor({ store, log, now = Date.now }: { store: Store; log: Logger; now?: () => number }) {
    this.#store = store;
    this.#log = log;
    this.#now = now;
  }

  #expiry(ttlSeconds: number | undefined): string | null {
    return ttlSeconds === undefined ? null : new Date(this.#now() + ttlSeconds * 1000).toISOString();
  }

  /** A `store` step's operation (engine/steps/store.ts checked the request; checked again here). */
  async run(request: DataStoreRequest): Promise<DataStoreAnswer> {
    const keyProblem = dataKeyProblem(request.key);
    if (keyProblem) throw new ServiceRefusal(`The key ${keyProblem}.`, { field: '/key' });
    const at: DataAddress = { scope: request.scope, workflowId: request.workflowId, key: request.key };
    const db = this.#store.db;
    const now = new Date(this.#now()).toISOString();
    const expiresAt = this.#expiry(request.ttlSeconds);
    switch (request.op) {
      case 'get': {
        const entry = await dataStoreRepo.get(db, at, now);
        return entry ? { found: true, value: JSON.parse(entry.value) } : { found: false, value: null };
      }
      case 'delete':
        return { deleted: await dataStoreRepo.delete(db, at, now) };
      case 'increment': {
        const by = request.by ?? 1;
        const value = await dataStoreRepo.increment(db, at, by, expiresAt, now);
        if (value === undefined)
          throw new ServiceRefusal(
            `The entry ${JSON.stringify(request.key)} holds something other than a number: increment adds only to numbers (or creates the entry).`,
            { field: '/key' },
          );
        return { value };
      }
      case 'set':
      case 'setIfAbsent': {
        const checked = dataValueJson(request.value);
        if ('problem' in checked)
          throw new ServiceRefusal(`The value ${checked.problem}.`, { field: '/value' });
        if (request.op === 'set') {
          await dataStoreRepo.set(db, at, request.value, checked.json, expiresAt, now);
          return { value: request.value };
        }
        const done = await dataStoreRepo.setIfAbsent(db, at, request.value, checked.json, expiresAt, now);
        return { set: done.set, value: done.set ? request.value : JSON.parse(done.value) };
      }
    }
  }

  // The API (http/routes/store.ts): AppErrors for a person calling it.

  async list(
    where: { scope: DataScope; workflowId: string; prefix?: string | undefined },
    limit: number,
    cursor: string | undefined,
  ): Promise<{ items: DataEntryView[]; nextCursor: string | null }> {
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const rows = await dataStoreRepo.list(
      this.#store.db,
      { ...where, after },
      limit + 1,
      new Date(this.#now()).toISOString(),
    );
    const page = rows.slice(0, limit);
    return {
      items: page.map(view),
      nextCursor: rows.length > limit ? Buffer.from(page[page.length - 1]!.key).toString('base64url') : null,
    };
  }

  async get(at: DataAddress): Promise<DataEntryView> {
    checkKey(at.key);
    const entry = await dataStoreRepo.get(this.#store.db, at, new Date(this.#now()).toISOString());
    if (!entry) throw notFound(at);
    return view(entry);
  }

  async put(at: DataAddress, value: unknown, ttlSeconds: number | undefined): Promise<DataEntryView> {
    checkKey(at.key);
    const checked = dataValueJson(value);
    if ('problem' in checked)
      throw new AppError('validation_failed', `The value ${checked.problem}.`, {
        fields: [{ field: '/value', message: checked.problem }],
      });
    if (ttlSeconds !== undefined && !(ttlSeconds > 0 && ttlSeconds <= DATA_TTL_MAX_SECONDS))
      throw new AppError(
        'validation_failed',
        `ttlSeconds must be above 0 and at most ${DATA_TTL_MAX_SECONDS}.`,
        {
          fields: [{ field: '/ttlSeconds', message: `must be above 0 and at most ${DATA_TTL_MAX_SECONDS}` }],
        },
      );
    const now = new Date(this.#now()).toISOString();
    const expiresAt = this.#expiry(ttlSeconds);
    await dataStoreRepo.set(this.#store.db, at, value, checked.json, expiresAt, now);
    return { key: at.key, value, expiresAt, updatedAt: now };
  }

  async delete(at: DataAddress): Promise<void> {
    checkKey(at.key);
    if (!(await dataStoreRepo.delete(this.#store.db, at, new Date(this.#now()).toISOString())))
      throw notFound(at);
  }

  /** Deletes expired entries now and every minute until `close`. */
  start(): void {
    const sweep = () => {
      void dataStoreRepo
        .sweep(this.#store.db, new Date(this.#now()).toISOString())
        .then((n) => n > 0 && this.#log.debug({ deleted: n }, 'expired data store entries deleted'))
        .catch((err) => this.#log.warn({ err }, 'deleting expired data store entries failed'));
    };
    sweep();
    this.#timer = setInterval(sweep, SWEEP_MS);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
  }
}

function checkKey(key: string): void {
  const problem = dataKeyProblem(key);
  if (problem)
    throw new AppError('validation_failed', `The key ${problem}.`, {
      fields: [{ field: '/key', message: problem }],
    });
}

function notFound(at: DataAddress): AppError {
  return new AppError(
    'not_found',
    `No entry ${JSON.stringify(at.key)} in the ${at.scope} data store${at.scope === 'workflow' ? ` of workflow ${at.workflowId}` : ''} (absent or expired).`,
  );
}

function decodeCursor(cursor: string): string {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (key.length === 0)
    throw new AppError('validation_failed', 'The cursor is not one this list gave.', {
      fields: [{ field: '/cursor', message: 'is not a cursor of this list' }],
    });
  return key;
}
