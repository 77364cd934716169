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
import { learnedSchemasRepo } from '../store/learned-schemas.js';
import type { TestEventRow } from '../store/schema.js';
import type { Db, Store } from '../store/store.js';
import { testEventsRepo } from '../store/test-events.js';
import { testListenersRepo } from '../store/test-listeners.js';
import { workflowsRepo } from '../store/workflows.js';
import { isWebhookWorkflow, type Workflow } from '../model/workflow.js';
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
        if (!isWebhookWorkflow(workflow)) throw scheduleHasNoTestUrl(workflow);
        await testListenersRepo.deleteExpired(trx, now.toISOString());
        // The test URL serves the draft (SPEC 1), so the draft's trigger is what must be free.
        await assertNoListenerConflict(trx, workflow, now.toISOString());
        await testListenersRepo.deleteOf(trx, workflowId);
        await testListenersRepo.insert(trx, {
          id,
          workflow_id: workflowId,
          keep_listening: keepListening ? 1 : 0,
          expires_at: expiresAt,
          created_at: now.toISOString(),
        });
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
    await testListenersRepo.deleteOf(this.#store.db, workflowId);
    await this.#bus.publish('listener.changed', { workflowId });
  }

  /** The open listener of a workflow, if any. */
  async current(workflowId: string): Promise<ListenerInfo | undefined> {
    const workflow = await this.#requireWorkflow(workflowId);
    if (!isWebhookWorkflow(workflow)) return undefined;
    const row = await testListenersRepo.openOf(this.#store.db, workflowId, nowIso());
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
    const rows = await testEventsRepo.list(this.#store.db, workflowId, { limit: limit + 1, before });
    return toPage(rows, limit, toEvent);
  }

  async event(workflowId: string, eventId: string): Promise<TestEvent | undefined> {
    const row = await testEventsRepo.get(this.#store.db, workflowId, eventId);
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
    const schema = await learnedSchemasRepo.get(this.#store.db, workflowId);
    return schema !== undefined ? (JSON.parse(schema) as LearnedSchema) : undefined;
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
    const listening = args.keepListening
      ? await testListenersRepo.isOpen(trx, args.listenerId, args.receivedAt)
      : await testListenersRepo.consume(trx, args.listenerId, args.receivedAt);
    if (!listening) throw notListening();
    await testEventsRepo.insert(trx, {
      id: args.eventId,
      workflow_id: args.workflowId,
      execution_id: args.executionId,
      item: args.itemJson,
      received_at: args.receivedAt,
    });
    const previous = await learnedSchemasRepo.get(trx, args.workflowId);
    const learned = learn(
      previous !== undefined ? (JSON.parse(previous) as LearnedSchema) : undefined,
      args.item,
    );
    await learnedSchemasRepo.put(trx, args.workflowId, JSON.stringify(learned), args.receivedAt);
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

/** A schedule has no test URL: the editor's Run now (POST /workflows/:id/run) tests it. */
function scheduleHasNoTestUrl(workflow: Workflow): AppError {
  return new AppError(
    'validation_failed',
    `Workflow "${workflow.name}" starts from a schedule, so it has no test URL to listen on.`,
    {
      hint: 'Test it with Run now (POST /api/v1/workflows/:id/run), or change its trigger to a webhook.',
      fields: [{ field: '/trigger/type', message: 'a schedule trigger has no test URL' }],
    },
  );
}
