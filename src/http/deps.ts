import type {
  FastifyInstance,
  FastifyBaseLogger,
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Accounts } from '../accounts/accounts.js';
import type { Config } from '../config.js';
import type { Mailer } from '../credentials/mailer.js';
import type { OAuth2 } from '../credentials/oauth2.js';
import type { CredentialService } from '../credentials/service.js';
import type { VariableService } from '../variables/service.js';
import type { TriggerHealth } from '../health/monitor.js';
import type { Metrics } from '../metrics.js';
import type { StoreHealth } from '../store/health.js';
import type { Store } from '../store/store.js';
import type { TokenService } from '../tokens/tokens.js';
import type { Rejections } from '../webhooks/options/rejections.js';
import type { Receiver } from '../webhooks/receive.js';
import type { TestListeners } from '../webhooks/test-listener.js';
import type { WorkflowService } from '../workflows/service.js';
import type { WorkflowTests } from '../workflow-tests/service.js';
import type { ExecutionService } from '../executions/service.js';
import type { DataStore } from '../executions/data-store.js';

/** Everything the HTTP layer talks to, built by main.ts. */
export interface HttpDeps {
  config: Config;
  log: Logger;
  store: Store;
  /** Whether the store takes writes (SPEC 3.5): /readyz, and told of the writes that fail. */
  health: StoreHealth;
  metrics: Metrics;
  tokens: TokenService;
  accounts: Accounts;
  workflows: WorkflowService;
  executions: ExecutionService;
  credentials: CredentialService;
  /** HOOKFLOW_MAILER_CREDENTIAL set: mails invitation links (credentials/mailer.ts). */
  mailer?: Mailer;
  /** OAuth2 credentials' connection (authorize, the callback page). */
  oauth2: OAuth2;
  variables: VariableService;
  listeners: TestListeners;
  receiver: Receiver;
  rejections: Rejections;
  triggerHealth: TriggerHealth;
  workflowTests: WorkflowTests;
  /** The data store (SPEC 7f), for /api/v1/store. */
  dataStore: DataStore;
}

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
