/**
 * The bus: notices between components, and (on PostgreSQL) between processes. The embedded mode
 * delivers in-process and awaits the handlers, so "save, then call the URL" works without delay.
 */
export interface BusEvents {
  /** A workflow was created, saved, activated, deactivated or deleted: reload its triggers. */
  'workflow.changed': { workflowId: string };
  /** A test listener was opened, consumed, closed or expired. */
  'listener.changed': { workflowId: string };
  /** A test request was captured. */
  'test.captured': { workflowId: string; eventId: string };
  /** New executions are queued: wake a worker. */
  'execution.queued': Record<string, never>;
  /** An execution reached a final status. */
  'execution.finished': { executionId: string; status: string };
  /**
   * A `respondStep` execution ran its first `respond` step: the webhook call waiting for it is
   * answered now, while the execution goes on. Only sent for responses small enough for a notice.
   */
  'execution.responded': { executionId: string; response: StepResponse };
  /** An execution waits for requests of this workflow (executions/waits.ts): match them as they are stored. */
  'wait.watched': { workflowId: string };
  /** A credential was changed or deleted: executors close the database connections they hold for it. */
  'credential.changed': { credentialId: string };
  /**
   * Local only, never sent to other processes: the cross-process bus was cut off and is back, so
   * notices may have been missed meanwhile. Whoever keeps state built from notices re-reads it
   * from the store (the trigger registry reloads, waiting responses look their executions up).
   */
  'bus.resynced': Record<string, never>;
}
export type BusChannel = keyof BusEvents;

/** What a `respond` step answers (engine/steps/respond.ts). */
export interface StepResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}
type Handler<C extends BusChannel> = (payload: BusEvents[C]) => void | Promise<void>;

export interface Bus {
  publish<C extends BusChannel>(channel: C, payload: BusEvents[C]): Promise<void>;
  /**
   * Delivers to this process's subscribers only: for a notice nobody elsewhere can be waiting for
   * (an execution that ran before its commit, in the process whose request is waiting for it).
   */
  publishHere<C extends BusChannel>(channel: C, payload: BusEvents[C]): Promise<void>;
  subscribe<C extends BusChannel>(channel: C, handler: Handler<C>): () => void;
  close(): Promise<void>;
}

const DONE: Promise<void> = Promise.resolve();

export class LocalBus implements Bus {
  readonly #handlers = new Map<BusChannel, Set<Handler<BusChannel>>>();

  publish<C extends BusChannel>(channel: C, payload: BusEvents[C]): Promise<void> {
    const handlers = this.#handlers.get(channel);
    if (!handlers) return DONE;
    // Every finished execution is published: handlers that return nothing (most) cost no promise.
    const pending: Promise<void>[] = [];
    for (const h of [...handlers]) {
      try {
        const result = h(payload);
        if (result) pending.push(result);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return pending.length > 0 ? Promise.all(pending).then(() => undefined) : DONE;
  }

  publishHere<C extends BusChannel>(channel: C, payload: BusEvents[C]): Promise<void> {
    return this.publish(channel, payload);
  }

  subscribe<C extends BusChannel>(channel: C, handler: Handler<C>): () => void {
    let set = this.#handlers.get(channel);
    if (!set) {
      set = new Set();
      this.#handlers.set(channel, set);
    }
    set.add(handler as Handler<BusChannel>);
    return () => set.delete(handler as Handler<BusChannel>);
  }

  async close(): Promise<void> {
    this.#handlers.clear();
  }
}
