/**
 * Executions (SPEC 8 `/executions`): reading them and the files their requests carried, and
 * starting new ones from a stored trigger item (SPEC 7):
 * - retry: the same item into the same workflow version, linked to the old execution (`retryOf`);
 * - replay: the stored item (of a test or production execution) into the workflow's published
 *   version in production mode (the default), or into its draft (latest version) in test mode.
 * Either way a new `queued` row, picked up by a worker like any other.
 */
import { AppError } from '../errors.js';
import { encodeCursor, newId, nowIso, type Page, toPage } from '../ids.js';
import type { Bus } from '../bus/bus.js';
import { blobsRepo } from '../store/blobs.js';
import { parseWhere, searchExecutions } from '../store/execution-search.js';
import { type ExecutionFilter, executionsRepo, queuedExecution } from '../store/executions.js';
import type { BlobRow, ExecutionRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { workflowsRepo } from '../store/workflows.js';

export type ReplayTarget = 'published' | 'draft';

export class ExecutionService {
  readonly #store: Store;
  readonly #bus: Bus;

  constructor({ store, bus }: { store: Store; bus: Bus }) {
    this.#store = store;
    this.#bus = bus;
  }

  async list<T>(filter: ExecutionFilter, map: (row: ExecutionRow) => T, where?: string): Promise<Page<T>> {
    if (where !== undefined) {
      const condition = parseWhere(where);
      if (!condition)
        throw new AppError('validation_failed', `"${where}" is not a field condition.`, {
          hint: 'Write where=<path>=<value>, the path in dots from the trigger item, e.g. where=body.order_id=o-1.',
          fields: [{ field: '/where', message: 'expected <path>=<value>' }],
        });
      const page = await searchExecutions(this.#store.db, this.#store.caps, filter, condition);
      return {
        items: page.rows.map(map),
        nextCursor: page.continueBefore ? encodeCursor(page.continueBefore) : null,
      };
    }
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

  /** Run the execution's item again through the same workflow version. Returns the new execution's id. */
  async retry(id: string): Promise<string> {
    const old = await this.get(id);
    const version = await workflowsRepo.getVersion(this.#store.db, old.workflow_id, old.workflow_version);
    if (!version) throw workflowGone(old.workflow_id);
    return this.#enqueue(old, old.workflow_version, old.id);
  }

  /**
   * Run the execution's stored item through the workflow's published version (production mode,
   * what live traffic would do with it) or its draft (test mode, what the editor tests), SPEC 7/8.
   * A workflow never published has no published version: 409 `not_published`. Returns the new
   * execution's id.
   */
  async replay(id: string, target: ReplayTarget = 'published'): Promise<string> {
    const old = await this.get(id);
    const workflow = await workflowsRepo.get(this.#store.db, old.workflow_id);
    if (!workflow) throw workflowGone(old.workflow_id);
    if (target === 'draft') return this.#enqueue(old, workflow.version, null, 'test');
    if (workflow.publishedVersion === null) {
      throw new AppError(
        'not_published',
        `Workflow "${workflow.name}" (${workflow.id}) has never been published, so there is no published version to replay into.`,
        {
          hint: 'Replay into the draft with {"target":"draft"}, or publish the workflow first (POST /api/v1/workflows/:id/publish).',
        },
      );
    }
    return this.#enqueue(old, workflow.publishedVersion, null, 'production');
  }

  async #enqueue(
    old: ExecutionRow,
    version: number,
    retryOf: string | null,
    mode: ExecutionRow['mode'] = old.mode,
  ): Promise<string> {
    const executionId = newId();
    const now = nowIso();
    await executionsRepo.insert(
      this.#store.db,
      queuedExecution({
        id: executionId,
        workflow_id: old.workflow_id,
        workflow_version: version,
        // A retry keeps the mode; a replay runs as its target does (published: production, draft:
        // test). The item itself keeps saying how it arrived (`executionMode`).
        mode,
        trigger: old.trigger,
        created_at: now,
        retry_of: retryOf,
        // Warnings are about the item (schemaCheck "warn"), which is the same.
        warnings: old.warnings,
      }),
    );
    await this.#bus.publish('execution.queued', {});
    return executionId;
  }

  async file(id: string): Promise<BlobRow> {
    const row = await blobsRepo.get(this.#store.db, id);
    if (!row) {
      throw new AppError('not_found', `There is no file with id ${id}.`, {
        hint: "File ids are listed in the `files` of an execution's trigger item.",
      });
    }
    return row;
  }
}

const workflowGone = (workflowId: string) =>
  new AppError(
    'not_found',
    `Workflow ${workflowId} of this execution no longer exists (or not in that version).`,
    {
      hint: 'Replay the item into an existing workflow, or re-create the workflow.',
    },
  );
