/**
 * Test harness: a real hookflow (real store, real server on a free loopback port) per test file.
 * SQLite by default in a fresh temp data dir; pass `postgres: true` for a fresh PostgreSQL
 * database (created here, dropped on close).
 */
import type { Clock } from '../../src/shared/clock.js';
import type { Logger } from 'pino';
import { NODE_FLAGS } from '../../bin/node-flags.js';
import { type Config, loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { type Hookflow, type Roles, startHookflow } from '../../src/main.js';
import { TokenService } from '../../src/tokens/tokens.js';
import { createTestDatabase } from './postgres.js';
import { tempDir } from './temp-dir.js';

export interface TestServer {
  hookflow: Hookflow;
  config: Config;
  /** http://127.0.0.1:<port> */
  url: string;
  token: string;
  /** The setup code the server issued at start (SPEC 11), as `hookflow start` prints it; undefined once an owner existed. */
  setupCode: string | undefined;
  dataDir: string;
  /** fetch against the server with the API token (JSON bodies are serialised). */
  api(method: string, route: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
  close(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test convenience
  body: any;
}

export interface StartOptions {
  env?: Record<string, string>;
  dataDir?: string;
  postgres?: boolean;
  roles?: Roles;
  /** The server's logger (default: HOOKFLOW_TEST_LOG_LEVEL, silent, on stderr); to read what it logs. */
  log?: Logger;
  /** The schedulers' clock (default: the system's); test/helpers/fake-clock.ts drives schedules. */
  clock?: Clock;
  /** The time its queue, executor and retention read (default: the system's; a FakeClock for leases and waits). */
  queueClock?: Clock;
}

export { tempDir };

export async function startTestServer(options: StartOptions = {}): Promise<TestServer> {
  // A served hookflow runs under these V8 flags (bin/hookflow.js); vitest.config.ts gives them to
  // the test workers, so that a test's server runs as production does.
  const missing = NODE_FLAGS.filter((flag) => !process.execArgv.includes(flag));
  if (missing.length > 0)
    throw new Error(`the test process lacks the V8 flags ${missing.join(' ')} (vitest.config.ts)`);
  const dataDir = options.dataDir ?? tempDir();
  const pg = options.postgres ? await createTestDatabase() : undefined;
  const env: Record<string, string> = {
    HOOKFLOW_HOST: '127.0.0.1',
    HOOKFLOW_PORT: '0',
    HOOKFLOW_DATA_DIR: dataDir,
    HOOKFLOW_LOG_LEVEL: process.env.HOOKFLOW_TEST_LOG_LEVEL ?? 'silent',
    HOOKFLOW_BASE_URL: 'http://hookflow.test',
    // Every process of a distributed setup shares one key (required with a database URL).
    ...(pg
      ? { HOOKFLOW_DATABASE_URL: pg.url, HOOKFLOW_ENCRYPTION_KEY: 'test-key-for-postgres-0123456789abcdef' }
      : {}),
    ...options.env,
  };
  const config = loadConfig({ env });
  const log = options.log ?? createLogger(config.log.level, 2);
  const hookflow = await startHookflow({
    config,
    log,
    ...(options.roles ? { roles: options.roles } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.queueClock ? { queueClock: options.queueClock } : {}),
  });
  const address = hookflow.app!.server.address();
  if (!address || typeof address === 'string') throw new Error('server has no TCP address');
  const url = `http://127.0.0.1:${address.port}`;
  const { token } = await new TokenService({ store: hookflow.store }).create('test');

  const api: TestServer['api'] = async (method, route, body, headers = {}) => {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed };
  };

  return {
    hookflow,
    config,
    url,
    token,
    setupCode: hookflow.setupCode,
    dataDir,
    api,
    async close() {
      await hookflow.close();
      await pg?.drop();
    },
  };
}

/** Create a workflow through the API and return its JSON (asserting 201). */
export async function createWorkflow(server: TestServer, body: Record<string, unknown>) {
  const res = await server.api('POST', '/api/v1/workflows', { name: 'test', ...body });
  if (res.status !== 201) throw new Error(`create workflow: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function createActiveWorkflow(server: TestServer, body: Record<string, unknown>) {
  const wf = await createWorkflow(server, body);
  const res = await server.api('POST', `/api/v1/workflows/${wf.id}/activate`);
  if (res.status !== 200) throw new Error(`activate: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Poll until fn returns a truthy value (or throw after timeoutMs). */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A fetch Response's JSON body, typed loosely for assertions. */
// biome-ignore lint/suspicious/noExplicitAny: test convenience
export const json = (res: Response): Promise<any> => res.json();
