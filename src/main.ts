/**
 * Composition root: config → logger → store → bus → queue → webhooks → engine → http.
 * The only module that knows the whole graph; everything else gets its deps as a named object.
 * `close()` releases in reverse order: stop taking requests, commit what was accepted, let
 * running executions finish, close the store.
 */
import { type Clock, systemClock } from './shared/clock.js';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import { Accounts } from './accounts/accounts.js';
import type { Config } from './config.js';
import { Mailer } from './credentials/mailer.js';
import { OAuth2 } from './credentials/oauth2.js';
import { CredentialService } from './credentials/service.js';
import { createOutbound, OPEN_NETWORK, publicNetworkOnly } from './engine/network.js';
import { DataStore } from './executions/data-store.js';
import { VariableService } from './variables/service.js';
import { ErrorWorkflows } from './executions/error-workflows.js';
import { TRIGGER_HEALTH_SWEEP_MS, TriggerHealth } from './health/monitor.js';
import { WorkflowTests } from './workflow-tests/service.js';
import { SubWorkflows } from './executions/sub-workflows.js';
import { Waits } from './executions/waits.js';
import { ExecutionService } from './executions/service.js';
import type { App } from './http/deps.js';
import { createServer } from './http/server.js';
import { Metrics } from './metrics.js';
import { type Bus, LocalBus } from './bus/bus.js';
import { Queue } from './queue/queue.js';
import { Retention } from './queue/retention.js';
import { Worker } from './queue/worker.js';
import { SecretBox } from './security/secrets.js';
import { GroupCommit } from './store/group-commit.js';
import { StoreHealth } from './store/health.js';
import { openStore } from './store/open.js';
import { queueRepo } from './store/queue.js';
import type { Store } from './store/store.js';
import { TokenService } from './tokens/tokens.js';
import { Ingest } from './webhooks/ingest.js';
import { QueuedNotice, QueueEntry } from './queue/entry.js';
import { type FailedExecution, Finished } from './queue/finished.js';
import { Engine } from './engine/run.js';
import { Rejections } from './webhooks/options/rejections.js';
import { Receiver } from './webhooks/receive.js';
import { TestListeners } from './webhooks/test-listener.js';
import { Triggers } from './webhooks/triggers.js';
import { ExecutionWaiter } from './webhooks/waiter.js';
import { WorkflowService } from './workflows/service.js';
import { Scheduler } from './schedules/scheduler.js';

export interface Roles {
  /** Serve webhooks, the API and the UI. */
  http: boolean;
  /** Run executions. */
  worker: boolean;
}

export interface Hookflow {
  app: App | undefined;
  store: Store;
  /** The URL the server listens on (with the real port when 0 was asked for). */
  url: string | undefined;
  /**
   * The one-time code that creates the owner account (SPEC 11), issued when a serving process
   * starts and no owner exists yet; the CLI prints it. Undefined otherwise.
   */
  setupCode: string | undefined;
  /** Trigger health (SPEC 7g): its sweep runs on processes with an executor; tests call `sweep(now)`. */
  triggerHealth: TriggerHealth;
  /** The schedule triggers' scheduler, in processes with the worker role. */
  scheduler: Scheduler | undefined;
  close(): Promise<void>;
}

export async function startHookflow({
  config,
  log,
  roles = { http: true, worker: true },
  clock,
  queueClock = systemClock,
}: {
  config: Config;
  log: Logger;
  roles?: Roles;
  /** The schedulers' time (tests pass a fake one); the system clock by default. */
  clock?: Clock;
  /**
   * The time the queue, the executor and retention read (tests of leases and waits pass a fake
   * one, test/helpers/fake-clock.ts); the system clock by default.
   */
  queueClock?: Clock;
}): Promise<Hookflow> {
  const secrets = SecretBox.load(config, log);
  const store = await openStore(config.store, log);
  // A shared store means other processes: the bus crosses them with LISTEN/NOTIFY (loaded only then).
  let bus: Bus;
  try {
    bus =
      store.caps.shared && config.store.databaseUrl
        ? await (await import('./bus/pg-bus.js')).PgBus.connect({ url: config.store.databaseUrl, log })
        : new LocalBus();
  } catch (err) {
    await store.close();
    throw err;
  }
  const workflows = new WorkflowService({
    store,
    bus,
    secrets,
    ...(clock ? { now: () => clock.now() } : {}),
  });
  const credentials = new CredentialService({ store, secrets, bus });
  // OAuth2 token requests leave through a pool of their own, under the http steps' SSRF policy.
  const tokenOutbound = createOutbound({
    allowPrivateNetwork: config.engine.allowPrivateNetwork,
    maxSocketsPerHost: config.engine.httpMaxSocketsPerHost,
  });
  const oauth2 = new OAuth2({ store, secrets, outbound: tokenOutbound, baseUrl: config.http.baseUrl, log });
  const variables = new VariableService({ store, secrets });
  // After the migrations, which cannot do it: the repair needs the encryption key.
  await workflows.repairSealedSecrets(log);
  const triggers = new Triggers({ store, bus, log });
  await triggers.load();
  // Whether the store takes writes (SPEC 3.5): told by the writes, read by /readyz.
  const health = new StoreHealth({ store, log });
  // One group commit for accepted requests and execution results: one transaction per cycle.
  const writer = new GroupCommit({ store, log, health });
  // Executions stored queued are announced once per turn (the workers claim them).
  const notice = new QueuedNotice({ bus, log });
  const errorWorkflows = new ErrorWorkflows({ store, bus, log });
  // The data store and sub-workflows (SPEC 7f): the steps' way to them (engine/services.ts).
  const dataStore = new DataStore({ store, log });
  const subWorkflows = new SubWorkflows({ store, bus });
  // Waits for a call or an event (SPEC 7g); resume URLs carry a token under a key of their own.
  const resumeUrls = { baseUrl: config.http.baseUrl, key: secrets.derive('resume-url') };
  const engineOptions = { ...config.engine, resumeUrls };
  const waits = new Waits({ store, bus, log, resumeUrls });
  await waits.start();
  const onFailed = async (failed: FailedExecution) => {
    await errorWorkflows.start(failed);
  };
  // Without an executor here, pure workflows still run before their commit (queue/entry.ts).
  const ingest = new Ingest({
    store,
    writer,
    entry: new QueueEntry(
      notice,
      roles.worker || !config.ingest.runPure
        ? undefined
        : { engine: new Engine(engineOptions), finished: new Finished({ store, bus, log, onFailed }) },
    ),
    maxPending: config.ingest.maxPending,
  });
  const listeners = new TestListeners({ store, bus, baseUrl: config.http.baseUrl });
  const waiter = new ExecutionWaiter({ store, bus, maxWaiting: config.http.maxWaitingResponses });
  // Refused webhook calls, kept in the store (buffered, written once a second).
  const rejections = new Rejections({ store, log });
  const receiver = new Receiver({
    triggers,
    ingest,
    listeners,
    waiter,
    bus,
    log,
    store,
    secrets,
    rejections,
    waits,
    baseUrl: config.http.baseUrl,
    maxBodyBytes: config.http.maxBodyBytes,
  });
  const queue = new Queue({
    store,
    workerId: `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    leaseMs: config.executor.leaseMs,
    writer,
    clock: queueClock,
  });
  const worker = roles.worker
    ? new Worker({
        store,
        queue,
        bus,
        notice,
        log,
        concurrency: config.executor.concurrency,
        maxInFlight: config.executor.maxInFlight,
        runPure: config.ingest.runPure,
        engine: engineOptions,
        credentials,
        tokens: oauth2,
        services: {
          dataStore: (request) => dataStore.run(request),
          startWorkflow: (request) => subWorkflows.start(request),
          workflowState: (executionId) => subWorkflows.state(executionId),
          waitFor: (request) => waits.waitFor(request),
        },
        variables,
        onFailed,
        clock: queueClock,
      })
    : undefined;
  // The queue gauges (SPEC 7d): this process's executions in flight, the store's backlog.
  const metrics = new Metrics(() => ingest.pending, {
    inFlight: () => worker?.active ?? 0,
    backlog: () => queueRepo.backlog(store, new Date().toISOString()),
  });
  // Executions accepted here are offered to this executor first (queue/entry.ts).
  if (worker) ingest.handOffTo(worker);
  // Old executions are deleted by the processes that run them (any number may: deletes are idempotent).
  const retention = roles.worker
    ? new Retention({ store, log, clock: queueClock, ...config.executions })
    : undefined;
  // Trigger alerts are swept by the processes that run executions; every serving process reports health.
  const triggerHealth = new TriggerHealth({ store, bus, log, sweepMs: TRIGGER_HEALTH_SWEEP_MS });
  // Schedule triggers fire where executions run (src/schedules/README.md says why): every process
  // with the worker role races for each tick, and the store lets one of them claim it.
  const scheduler = roles.worker ? new Scheduler({ store, bus, log, clock }) : undefined;

  // Invitation links by mail (SPEC 11b), on the network policy of steps.
  const mailer =
    roles.http && config.mailer.credential !== undefined
      ? new Mailer({
          credentials,
          credential: config.mailer.credential,
          policy: config.engine.allowPrivateNetwork ? OPEN_NETWORK : publicNetworkOnly(),
        })
      : undefined;
  let app: App | undefined;
  let url: string | undefined;
  let setupCode: string | undefined;
  try {
    retention?.start();
    if (roles.worker) triggerHealth.start();
    // Expired entries are deleted by the processes that run executions (reads ignore them anyway).
    if (worker) dataStore.start();
    if (worker) {
      await worker.start();
      log.info(
        {
          concurrency: config.executor.concurrency,
          maxInFlight: config.executor.maxInFlight,
          store: store.caps.name,
        },
        'executor started',
      );
    }
    await scheduler?.start();
    if (roles.http) {
      const accounts = new Accounts({ store });
      app = await createServer({
        config,
        log,
        store,
        health,
        metrics,
        tokens: new TokenService({ store }),
        accounts,
        workflows,
        executions: new ExecutionService({ store, bus, waits }),
        credentials,
        ...(mailer ? { mailer } : {}),
        oauth2,
        variables,
        listeners,
        receiver,
        rejections,
        triggerHealth,
        workflowTests: new WorkflowTests({ store, engine: config.engine }),
        dataStore,
      });
      // Never logged: log lines travel further than the terminal the operator reads.
      setupCode = await accounts.issueSetupCode();
      url = await app.listen({ host: config.http.host, port: config.http.port });
      log.info({ url, baseUrl: config.http.baseUrl, store: store.caps.name }, 'hookflow is listening');
      if (mailer) {
        // Looked up again at each invitation: a credential created after the start is used then.
        const found = await credentials.smtp(mailer.credential);
        if ('error' in found)
          log.warn(
            { reason: found.error },
            'HOOKFLOW_MAILER_CREDENTIAL names no smtp credential yet: invitations are not mailed',
          );
        else log.info({ credential: found.id }, 'invitations are mailed');
      }
    }
  } catch (err) {
    waits.close();
    await triggerHealth.close();
    mailer?.close();
    await scheduler?.close();
    await retention?.close();
    await worker?.close(0);
    await tokenOutbound.close();
    await bus.close();
    await store.close();
    throw err;
  }

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await app?.close();
      mailer?.close();
      await scheduler?.close();
      await rejections.close();
      await triggerHealth.close();
      await ingest.close();
      await worker?.close();
      await retention?.close();
      dataStore.close();
      waiter.close();
      waits.close();
      triggers.close();
      await tokenOutbound.close();
      await bus.close();
      await store.close();
    })();
    return closing;
  };
  return { app, store, url, setupCode, triggerHealth, scheduler, close };
}
