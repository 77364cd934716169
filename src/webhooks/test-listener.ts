/**
 * Test listening (SPEC 3, 8): a listener is a stored row with an expiry, written before the test URL
 * is shown, and consumed by the first capture (unless keepListening). Being in the store it survives
 * restarts and is visible to every process. A capture stores a test event, merges the learned
 * schema and queues a test execution, all in the ingest transaction of the request.
 */
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import { newId, nowIso, type Page, toPage } from '../ids.js';
import type { Bus } from '../bus/bus.js';
import type { TestEventRow } from '../store/schema.js';
import type { Db, Store } from '../store/store.js';
import { workflowsRepo } from '../store/workflows.js';
import type { Workflow } from '../model/workflow.js';
import { assertNoListenerConflict } from '../workflows/paths.js';
import { workflowNotFound } from '../workflows/service.js';
import { learn } from './schema/infer.js';
import type { LearnedSchema } from './schema/json-schema.js';

export const DEFAULT_LISTEN_SECONDS = 120;
export const MAX_LISTEN_SECONDS = 600;

export interface ListenerInfo {
  listenerId: string;
  expiresAt: string;
  testUrl: string;
  keepListening: boolean;
}

export interface TestEvent {
  id: string;
  executionId: string | null;
  receivedAt: string;
  item: unknown;
}

const toEvent = (row: TestEventRow): TestEvent => ({
  id: row.id,
  executionId: row.execution_id,
  receivedAt: row.received_at,
  item: JSON.parse(row.item),
});

export class TestListeners {
  readonly #store: Store;
  readonly #bus: Bus;
  readonly #baseUrl: string;

  constructor({ store, bus, baseUrl }: { store: Store; bus: Bus; baseUrl: string; log?: Logger }) {
    this.#store = store;
    this.#bus = bus;
    this.#baseUrl = baseUrl;
  }

  async open(
    workflowId: string,
    opts: { timeoutSeconds?: number; keepListening?: boolean },
  ): Promise<ListenerInfo> {
    const seconds = opts.timeoutSeconds ?? DEFAULT_LISTEN_SECONDS;
    const keepListening = opts.keepListening ?? false;
    const now = new Date();
    const expiresAt = new Date(now.getTime() + seconds * 1000).toISOString();
    const id = newId();
    const workflow = await this.#store.transaction(
      async (trx) => {
        const workflow = await workflowsRepo.get(trx, workflowId);
        if (!workflow) throw workflowNotFound(workflowId);
        await trx.deleteFrom('test_listeners').where('expires_at', '<=', now.toISOString()).execute();
        // The test URL serves the draft (SPEC 1), so the draft's trigger is what must be free.
        await assertNoListenerConflict(trx, workflow, now.toISOString());
        await trx.deleteFrom('test_listeners').where('workflow_id', '=', workflowId).execute();
        await trx
          .insertInto('test_listeners')
          .values({
            id,
            workflow_id: workflowId,
            keep_listening: keepListening ? 1 : 0,
            expires_at: expiresAt,
            created_at: now.toISOString(),
          })
          .execute();
        return workflow;
      },
      { lock: 'hookflow:paths' },
    );
    await this.#bus.publish('listener.changed', { workflowId });
    return {
      listenerId: id,
      expiresAt,
      testUrl: `${this.#baseUrl}/webhook-test/${workflow.trigger.path}`,
      keepListening,
    };
  }

  async close(workflowId: string): Promise<void> {
    await this.#requireWorkflow(workflowId);
    await this.#store.db.deleteFrom('test_listeners').where('workflow_id', '=', workflowId).execute();
    await this.#bus.publish('listener.changed', { workflowId });
  }

  /** The open listener of a workflow, if any. */
  async current(workflowId: string): Promise<ListenerInfo | undefined> {
    const workflow = await this.#requireWorkflow(workflowId);
    const row = await this.#store.db
      .selectFrom('test_listeners')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .where('expires_at', '>', nowIso())
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      listenerId: row.id,
      expiresAt: row.expires_at,
      testUrl: `${this.#baseUrl}/webhook-test/${workflow.trigger.path}`,
      keepListening: row.keep_listening === 1,
    };
  }

  async events(workflowId: string, limit: number, before: string | undefined): Promise<Page<TestEvent>> {
    await this.#requireWorkflow(workflowId);
    let q = this.#store.db
      .selectFrom('test_events')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .orderBy('id', 'desc')
      .limit(limit + 1);
    if (before) q = q.where('id', '<', before);
    return toPage(await q.execute(), limit, toEvent);
  }

  async event(workflowId: string, eventId: string): Promise<TestEvent | undefined> {
    const row = await this.#store.db
      .selectFrom('test_events')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .where('id', '=', eventId)
      .executeTakeFirst();
    return row ? toEvent(row) : undefined;
  }

  /**
   * Resolves with the id of the next capture for this workflow, or undefined after `timeoutMs`
   * or when `signal` aborts (the client went away).
   */
  waitForNext(workflowId: string, timeoutMs: number, signal?: AbortSignal): Promise<string | undefined> {
    return new Promise((resolve) => {
      const finish = (id: string | undefined) => {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener('abort', onAbort);
        resolve(id);
      };
      const onAbort = () => finish(undefined);
      const timer = setTimeout(() => finish(undefined), timeoutMs);
      const unsubscribe = this.#bus.subscribe('test.captured', (e) => {
        if (e.workflowId === workflowId) finish(e.eventId);
      });
      signal?.addEventListener('abort', onAbort);
    });
  }

  /** Subscribe to captures of one workflow (SSE); returns the unsubscribe function. */
  onCapture(workflowId: string, handler: (eventId: string) => void): () => void {
    return this.#bus.subscribe('test.captured', (e) => {
      if (e.workflowId === workflowId) handler(e.eventId);
    });
  }

  async schema(workflowId: string): Promise<LearnedSchema | undefined> {
    await this.#requireWorkflow(workflowId);
    const row = await this.#store.db
      .selectFrom('learned_schemas')
      .select('schema')
      .where('workflow_id', '=', workflowId)
      .executeTakeFirst();
    return row ? (JSON.parse(row.schema) as LearnedSchema) : undefined;
  }

  /**
   * Inside the ingest transaction: consume the listener (a second request racing for a one-shot
   * listener finds it gone and gets 404), store the event and merge the schema.
   */
  async capture(
    trx: Db,
    args: {
      workflowId: string;
      listenerId: string;
      keepListening: boolean;
      eventId: string;
      executionId: string;
      item: unknown;
      itemJson: string;
      receivedAt: string;
    },
  ): Promise<void> {
    const listener = trx
      .selectFrom('test_listeners')
      .select('id')
      .where('id', '=', args.listenerId)
      .where('expires_at', '>', args.receivedAt);
    if (args.keepListening) {
      if (!(await listener.executeTakeFirst())) throw notListening();
    } else {
      const res = await trx
        .deleteFrom('test_listeners')
        .where('id', '=', args.listenerId)
        .where('expires_at', '>', args.receivedAt)
        .executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) throw notListening();
    }
    await trx
      .insertInto('test_events')
      .values({
        id: args.eventId,
        workflow_id: args.workflowId,
        execution_id: args.executionId,
        item: args.itemJson,
        received_at: args.receivedAt,
      })
      .execute();
    const previous = await trx
      .selectFrom('learned_schemas')
      .select('schema')
      .where('workflow_id', '=', args.workflowId)
      .executeTakeFirst();
    const learned = learn(previous ? (JSON.parse(previous.schema) as LearnedSchema) : undefined, args.item);
    const schema = JSON.stringify(learned);
    await trx
      .insertInto('learned_schemas')
      .values({ workflow_id: args.workflowId, schema, updated_at: args.receivedAt })
      .onConflict((oc) => oc.column('workflow_id').doUpdateSet({ schema, updated_at: args.receivedAt }))
      .execute();
  }

  async #requireWorkflow(id: string): Promise<Workflow> {
    const workflow = await workflowsRepo.get(this.#store.db, id);
    if (!workflow) throw workflowNotFound(id);
    return workflow;
  }
}

export function notListening(): AppError {
  return new AppError(
    'test_webhook_not_listening',
    'This test URL is not listening for requests right now.',
    {
      hint: 'Click "Listen for test event" in the workflow editor (or POST /api/v1/workflows/:id/test-listener, or run `hookflow listen <workflowId>`), then call the test URL again.',
    },
  );
}
