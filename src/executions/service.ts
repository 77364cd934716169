/** Reading executions and the files their requests carried (SPEC 8 `/executions`). */
import { AppError } from '../errors.js';
import { type Page, toPage } from '../ids.js';
import { type ExecutionFilter, executionsRepo } from '../store/executions.js';
import type { BlobRow, ExecutionRow } from '../store/schema.js';
import type { Store } from '../store/store.js';

export class ExecutionService {
  readonly #store: Store;

  constructor({ store }: { store: Store }) {
    this.#store = store;
  }

  async list<T>(filter: ExecutionFilter, map: (row: ExecutionRow) => T): Promise<Page<T>> {
    const rows = await executionsRepo.list(this.#store.db, { ...filter, limit: filter.limit + 1 });
    return toPage(rows, filter.limit, map);
  }

  async get(id: string): Promise<ExecutionRow> {
    const row = await executionsRepo.get(this.#store.db, id);
    if (!row) {
      throw new AppError('not_found', `There is no execution with id ${id}.`, {
        hint: 'List executions with GET /api/v1/executions to see their ids.',
      });
    }
    return row;
  }

  async file(id: string): Promise<BlobRow> {
    const row = await this.#store.db.selectFrom('blobs').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) {
      throw new AppError('not_found', `There is no file with id ${id}.`, {
        hint: 'File ids are listed in the `files` of an execution\'s trigger item.',
      });
    }
    return row;
  }
}
