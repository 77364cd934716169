/**
 * Executions (SPEC 8 `/executions`): reading them and the files their requests carried, and
 * starting new ones from a stored trigger item (SPEC 7):
 * - retry: the same item into the same workflow version, linked to the old execution (`retryOf`);
 * - replay: the stored item (of a test or production execution) into the workflow's published
 *   version in production mode (the default), or into its draft (latest version) in test mode.
 * Either way a new `queued` row, picked up by a worker like any other.
 */
import { Readable } from 'node:stream';
import { AppError } from '../errors.js';
import { encodeCursor, newId, nowIso, type Page, toPage } from '../ids.js';
import type { Bus } from '../bus/bus.js';
import { blobFiles } from '../store/blobs.js';
import {
  MAX_VALUE_LENGTH,
  parseWhere,
  SEARCH_WINDOW,
  searchExecutions,
  searchFieldRows,
  searchIndexed,
} from '../store/execution-search.js';
import {
  type ExecutionFilter,
  executionsRepo,
  queuedExecution,
  withConcurrency,
} from '../store/executions.js';
import { concurrencyOf } from '../engine/concurrency.js';
import type { BlobRow, ExecutionRow } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { queueRepo } from '../store/queue.js';
import { workflowsRepo } from '../store/workflows.js';
import { testEventsRepo } from '../store/test-events.js';
import type { Workflow, WorkflowSettings } from '../model/workflow.js';
import type { WaitingFor, Waits } from './waits.js';

export type ReplayTarget = 'published' | 'draft';

/** How a search (`where=`) was answered: beside `items` and `nextCursor` in the list. */
export interface SearchInfo {
  /** The field searched, in dots. */
  path: string;
  /** Through the searchable fields' index (full pages), or windowed (see store/execution-search.ts). */
  indexed: boolean;
  /** Indexed: the workflows whose index was searched. */
  workflowIds?: string[];
  /** Windowed: how many executions each request examined. */
  window?: number;
  hint?: string;
}

export class ExecutionService {
  readonly #store: Store;
  readonly #bus: Bus;

  readonly #waits: Waits | undefined;

  constructor({ store, bus, waits }: { store: Store; bus: Bus; waits?: Waits }) {
    this.#store = store;
    this.#bus = bus;
    this.#waits = waits;
  }

  /** What a waiting execution waits for: a call (its resume URL) or an event (SPEC 7g); else null. */
  async waitingFor(executionId: string): Promise<WaitingFor | null> {
    return this.#waits ? this.#waits.waitingFor(executionId) : null;
  }

  /**
   * The backlog a person can see (SPEC 7d; the Executions page): executions due and not taken by a
   * worker (queued, and waiting ones whose time has come), the oldest one's due time, and how many
   * are in flight (`running`) on all workers. The same reads as the /metrics gauges.
   */
  async backlog(): Promise<{ queued: number; oldestQueuedAt: string | null; inFlight: number; at: string }> {
    const at = nowIso();
    const [{ depth, oldestDueAt }, inFlight] = await Promise.all([
      queueRepo.backlog(this.#store, at),
      queueRepo.running(this.#store),
    ]);
    return { queued: depth, oldestQueuedAt: oldestDueAt ?? null, inFlight, at };
  }

  /**
   * The executions list; with `where` a search by a field of the trigger item, indexed when the
   * field is declared searchable (see store/execution-search.ts), and `search` says which it was.
   */
  async list<T>(
    filter: ExecutionFilter,
    map: (row: ExecutionRow) => T,
    where?: string,
  ): Promise<Page<T> & { search?: SearchInfo }> {
    if (where === undefined) {
      const rows = await this.#shown(
        await executionsRepo.list(this.#store.db, { ...filter, limit: filter.limit + 1 }),
      );
      return toPage(rows, filter.limit, map);
    }
    const condition = parseWhere(where);
    if (!condition)
      throw new AppError('validation_failed', `"${where}" is not a field condition.`, {
        hint: 'Write where=<path>=<value>, the path in dots from the trigger item, e.g. where=body.order_id=o-1.',
        fields: [{ field: '/where', message: 'expected <path>=<value>' }],
      });
    const path = condition.path.join('.');
    const declaring = await this.#declaring(filter.workflowId, path);
    const tooLong = condition.value.length > MAX_VALUE_LENGTH;
    if (declaring.length > 0 && !tooLong) {
      const rows = await this.#shown(
        await searchIndexed(
          this.#store.db,
          { ...filter, limit: filter.limit + 1 },
          declaring,
          path,
          condition.value,
        ),
      );
      const search: SearchInfo = { path, indexed: true, workflowIds: declaring };
      if (!filter.workflowId)
        search.hint = `Searched the executions of the workflows that declare ${path} as a searchable field (workflowIds). Filter by a workflow to search another one.`;
      return { ...toPage(rows, filter.limit, map), search };
    }
    const page = await searchExecutions(this.#store.db, this.#store.caps, filter, condition);
    return {
      items: (await this.#shown(page.rows)).map(map),
      nextCursor: page.continueBefore ? encodeCursor(page.continueBefore) : null,
      search: {
        path,
        indexed: false,
        window: SEARCH_WINDOW,
        hint: tooLong
          ? `Values over ${MAX_VALUE_LENGTH} characters are not indexed: each request searched the next ${SEARCH_WINDOW} executions; follow nextCursor until it is null.`
          : `${path} is not a searchable field of ${filter.workflowId ? 'this workflow' : 'any workflow'}: each request searched the next ${SEARCH_WINDOW} executions; follow nextCursor until it is null. To search it through an index, declare ${path} as a searchable field in the workflow's settings ("settings": {"searchFields": ["${path}"]}, or Settings in the editor); executions from then on are indexed.`,
      },
    };
  }

  /** The workflows whose latest saved version declares `path` searchable (of `workflowId` only, if given). */
  async #declaring(workflowId: string | undefined, path: string): Promise<string[]> {
    const rows = await workflowsRepo.settingsOf(this.#store.db, workflowId);
    return rows
      .filter((r) => (JSON.parse(r.settings) as WorkflowSettings).searchFields?.includes(path))
      .map((r) => r.id);
  }

  /** The execution, with its records so far when it has a checkpoint (#shown). */
  async get(id: string): Promise<ExecutionRow> {
    const row = await executionsRepo.get(this.#store.db, id);
    if (!row) {
      throw new AppError('not_found', `There is no execution with id ${id}.`, {
        hint: 'List executions with GET /api/v1/executions to see their ids.',
      });
    }
    return (await this.#shown([row]))[0]!;
  }

  /** The ids of the executions that retry `row` (POST …/retry), oldest first. */
  retriesOf(row: ExecutionRow): Promise<string[]> {
    return executionsRepo.retriesOf(this.#store.db, row);
  }

  /**
   * Rows as shown: one with a checkpoint (waiting, or resumed and running) has its records so far
   * in the checkpoint's parts, not in `steps` (store/executions.ts withRecordsSoFar).
   */
  #shown<R extends ExecutionRow>(rows: readonly R[]): Promise<R[]> {
    return executionsRepo.withRecordsSoFar(this.#store.db, rows);
  }

  /** Run the execution's item again through the same workflow version. Returns the new execution's id. */
  async retry(id: string): Promise<string> {
    const old = await this.get(id);
    const version = await workflowsRepo.getVersion(this.#store.db, old.workflow_id, old.workflow_version);
    if (!version) throw workflowGone(old.workflow_id);
    return this.#enqueue(old, version, old.id);
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
    if (target === 'draft') return this.#enqueue(old, workflow, null, 'test');
    if (workflow.publishedVersion === null) {
      throw new AppError(
        'not_published',
        `Workflow "${workflow.name}" (${workflow.id}) has never been published, so there is no published version to replay into.`,
        {
          hint: 'Replay into the draft with {"target":"draft"}, or publish the workflow first (POST /api/v1/workflows/:id/publish).',
        },
      );
    }
    const published =
      workflow.publishedVersion === workflow.version
        ? workflow
        : await workflowsRepo.getVersion(this.#store.db, workflow.id, workflow.publishedVersion);
    if (!published) throw workflowGone(old.workflow_id);
    return this.#enqueue(old, published, null, 'production');
  }

  /**
   * Run now (SPEC 7f): a test-mode run of the draft (the latest saved version) with `item`, by
   * default the newest test event's item, else `{}`. Returns the new execution's id.
   */
  async runNow(workflowId: string, item?: Record<string, unknown>): Promise<string> {
    const workflow = await workflowsRepo.get(this.#store.db, workflowId);
    if (!workflow) {
      throw new AppError('not_found', `There is no workflow with id ${workflowId}.`, {
        hint: 'List workflows with GET /api/v1/workflows to see their ids.',
      });
    }
    let trigger: string;
    if (item !== undefined) trigger = JSON.stringify(item);
    else {
      const [newest] = await testEventsRepo.list(this.#store.db, workflowId, { limit: 1 });
      trigger = newest ? newest.item : '{}';
    }
    const executionId = newId();
    const fields = searchFieldRows(
      { id: executionId, workflow_id: workflowId },
      workflow.settings?.searchFields,
      JSON.parse(trigger),
    );
    await this.#store.transaction(async (trx) => {
      await executionsRepo.insert(
        trx,
        queuedExecution({
          id: executionId,
          workflow_id: workflowId,
          workflow_version: workflow.version,
          mode: 'test',
          trigger,
          created_at: nowIso(),
        }),
        fields,
      );
    });
    await this.#bus.publish('execution.queued', {});
    return executionId;
  }

  /** `version`: the workflow as saved in the version to run (its settings say which fields to index). */
  async #enqueue(
    old: ExecutionRow,
    version: Workflow,
    retryOf: string | null,
    mode: ExecutionRow['mode'] = old.mode,
  ): Promise<string> {
    const executionId = newId();
    const now = nowIso();
    const searchFields = version.settings?.searchFields;
    const fields = searchFields
      ? searchFieldRows(
          { id: executionId, workflow_id: old.workflow_id },
          searchFields,
          JSON.parse(old.trigger),
        )
      : [];
    // A retry or replay is a new execution: its key is evaluated as for an accepted request, and it
    // takes its place at the end of its key's line (SPEC 7d).
    const concurrency = version.settings?.concurrency
      ? await concurrencyOf(version.settings.concurrency, JSON.parse(old.trigger), {
          id: executionId,
          mode,
          workflowId: old.workflow_id,
        })
      : undefined;
    const row = queuedExecution({
      id: executionId,
      workflow_id: old.workflow_id,
      workflow_version: version.version,
      // A retry keeps the mode; a replay runs as its target does (published: production, draft:
      // test). The item itself keeps saying how it arrived (`executionMode`).
      mode,
      trigger: old.trigger,
      created_at: now,
      retry_of: retryOf,
      // Warnings are about the item (schemaCheck "warn"), which is the same.
      warnings: old.warnings,
    });
    await this.#store.transaction(async (trx) => {
      await executionsRepo.insert(trx, concurrency ? withConcurrency(row, concurrency) : row, fields);
    });
    await this.#bus.publish('execution.queued', {});
    return executionId;
  }

  /**
   * A stored file (an upload, or what a step stored) and its bytes as a stream read part by part
   * from the store, so a download never holds the file in memory. A file still being stored (no
   * sha256 yet) is not found.
   */
  async file(id: string): Promise<{ row: Omit<BlobRow, 'data'>; stream: Readable }> {
    const row = await blobFiles.row(this.#store.db, id);
    if (!row || row.sha256 === '') {
      throw new AppError('not_found', `There is no file with id ${id}.`, {
        hint: 'File ids are listed in the `files` of an execution\'s trigger item, and in the `file` of an http step with responseType "file".',
      });
    }
    const { data: _data, ...meta } = row;
    return { row: meta, stream: Readable.from(blobFiles.chunks(this.#store.db, row), { objectMode: false }) };
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
