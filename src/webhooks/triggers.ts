/**
 * The live routing state of webhook URLs: one registry for production (the *published* version of
 * each active workflow, trigger included: path, methods, auth, options, response) and one for test
 * URLs (the *draft*, i.e. latest version, of each workflow with an open test listener) — SPEC 1.
 * A route holds the whole definition it serves, so an execution records and runs that version
 * (receive.ts takes `workflow.version` from the route). Rebuilt from the store on start and
 * reloaded per workflow on every bus notice, so the hot path never reads the database to find a
 * trigger, and a restart loses no registration (FIELD-NOTES 2).
 */
import type { Logger } from 'pino';
import type { Bus } from '../bus/bus.js';
import type { Store } from '../store/store.js';
import { testListenersRepo } from '../store/test-listeners.js';
import { rowToWorkflow, workflowsRepo } from '../store/workflows.js';
import { isWebhookWorkflow, type WebhookWorkflow } from '../model/workflow.js';
import { TriggerRegistry } from './registry.js';

export type Mode = 'test' | 'production';

export interface OpenListener {
  id: string;
  keepListening: boolean;
  /** epoch ms */
  expiresAt: number;
}

export interface TriggerRoute {
  /** Only webhook workflows have routes: a schedule has no URL (src/schedules starts those). */
  workflow: WebhookWorkflow;
  /** Set on test routes only. */
  listener?: OpenListener;
}

export class Triggers {
  readonly production = new TriggerRegistry<TriggerRoute>();
  readonly test = new TriggerRegistry<TriggerRoute>();
  readonly #store: Store;
  readonly #log: Logger;
  readonly #unsubscribe: (() => void)[];

  constructor({ store, bus, log }: { store: Store; bus: Bus; log: Logger }) {
    this.#store = store;
    this.#log = log;
    this.#unsubscribe = [
      bus.subscribe('workflow.changed', ({ workflowId }) => this.reload(workflowId)),
      bus.subscribe('listener.changed', ({ workflowId }) => this.reload(workflowId)),
      // Changes made by other processes while the bus was disconnected were never announced here.
      bus.subscribe('bus.resynced', () => this.load()),
    ];
  }

  registry(mode: Mode): TriggerRegistry<TriggerRoute> {
    return mode === 'production' ? this.production : this.test;
  }

  /** Load every active workflow and every open listener. */
  async load(): Promise<void> {
    const published = await workflowsRepo.listPublished(this.#store.db);
    this.production.replaceAll(published.filter(isWebhookWorkflow).map((w) => productionEntry(w)));
    const rows = await testListenersRepo.listOpen(this.#store.db, new Date().toISOString());
    this.test.replaceAll(
      rows.flatMap((r) => {
        const workflow = rowToWorkflow(r);
        if (!isWebhookWorkflow(workflow)) return [];
        return [
          testEntry(workflow, {
            id: r.listener_id,
            keepListening: r.keep_listening === 1,
            expiresAt: Date.parse(r.expires_at),
          }),
        ];
      }),
    );
    this.#log.info({ production: this.production.size, test: this.test.size }, 'webhook triggers loaded');
  }

  /** Re-read one workflow and its listener from the store and update both registries. */
  async reload(workflowId: string): Promise<void> {
    // Read everything before touching the registries: on PostgreSQL a read yields to the event loop,
    // and a test call arriving between remove and set was answered 404 while its listener was open.
    const workflow = await workflowsRepo.get(this.#store.db, workflowId);
    const published = workflow?.active
      ? await workflowsRepo.getPublished(this.#store.db, workflowId)
      : undefined;
    const listener = workflow ? await testListenersRepo.getOf(this.#store.db, workflowId) : undefined;
    this.production.remove(workflowId);
    this.test.remove(workflowId);
    if (!workflow) return;
    if (published && isWebhookWorkflow(published)) this.production.set(productionEntry(published));
    if (listener && isWebhookWorkflow(workflow) && Date.parse(listener.expires_at) > Date.now()) {
      this.#dropExpiredTestOwners(workflow);
      this.test.set(
        testEntry(workflow, {
          id: listener.id,
          keepListening: listener.keep_listening === 1,
          expiresAt: Date.parse(listener.expires_at),
        }),
      );
    }
  }

  /**
   * Nothing reloads a workflow when its listener lapses, so an expired listener keeps its method+path
   * in the test registry. The store has already let `workflow` listen there (it ignores expired rows),
   * so such stale owners give way; a live owner stays and makes `set` refuse.
   */
  #dropExpiredTestOwners(workflow: WebhookWorkflow): void {
    for (;;) {
      const owner = this.test.conflict(workflow.trigger.path, workflow.trigger.methods, workflow.id);
      if (owner === undefined) return;
      if ((this.test.get(owner)?.value.listener?.expiresAt ?? 0) > Date.now()) return;
      this.test.remove(owner);
    }
  }

  close(): void {
    for (const u of this.#unsubscribe) u();
  }
}

const productionEntry = (workflow: WebhookWorkflow) => ({
  workflowId: workflow.id,
  path: workflow.trigger.path,
  methods: workflow.trigger.methods,
  value: { workflow },
});

const testEntry = (workflow: WebhookWorkflow, listener: OpenListener) => ({
  workflowId: workflow.id,
  path: workflow.trigger.path,
  methods: workflow.trigger.methods,
  value: { workflow, listener },
});
