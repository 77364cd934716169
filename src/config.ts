/**
 * The one validated configuration object. `loadConfig({ env, argv })` is the only reader of
 * process.env in hookflow: every setting is declared once below with its env name, flag, default
 * and meaning, parsed and validated together, and frozen. A bad value is never warned about and
 * replaced by a default: loadConfig throws ConfigError naming every bad key, and the CLI exits 2.
 */
import path from 'node:path';
import { invalidCidr } from './model/cidr.js';

export interface Config {
  http: {
    /** HOOKFLOW_PORT / --port: TCP port to listen on. */
    port: number;
    /** HOOKFLOW_HOST / --host: interface to bind. */
    host: string;
    /** HOOKFLOW_BASE_URL / --base-url: public URL every webhook and UI link is built from. */
    baseUrl: string;
    /**
     * The path of baseUrl without its trailing slash ('' when hookflow is at the root), e.g.
     * '/hookflow' behind a proxy that serves it at https://example.com/hookflow/: requests are
     * answered with or without it (a proxy may strip it or pass it on), and the UI's links carry it.
     */
    basePath: string;
    /** HOOKFLOW_MAX_BODY_BYTES: largest request body accepted anywhere (webhooks: also per trigger). */
    maxBodyBytes: number;
    /**
     * HOOKFLOW_TRUST_PROXY: comma-separated addresses/CIDRs of reverse proxies whose X-Forwarded-For
     * is believed (for ipAllowlist and logs); empty (default) trusts no one.
     */
    trustProxy: string[];
    /**
     * HOOKFLOW_MAX_CONCURRENT_REQUESTS: requests in progress at once before new ones get 503
     * overloaded; counted apart for webhook calls and for the API + UI, so neither can starve the
     * other (the probes /healthz and /readyz are never refused). A webhook call counts from the
     * first byte of its body (at once when it has none), not while it only waits for one.
     */
    maxConcurrentRequests: number;
    /**
     * HOOKFLOW_MAX_WAITING_RESPONSES (default 8192): webhook callers waiting at once for their
     * execution's answer (response modes lastStep, respondStep; up to the trigger's timeoutMs).
     * Counted apart from HOOKFLOW_MAX_CONCURRENT_REQUESTS, whose place a call gives back once it is
     * stored: callers parked on a slow workflow do not refuse new calls to other webhooks. Past it,
     * such a call gets 503 overloaded before anything is stored (a retry sends nothing twice).
     */
    maxWaitingResponses: number;
    /**
     * HOOKFLOW_HEADERS_TIMEOUT (seconds, default 20): a client has this long to send a request's line
     * and headers, else 408 and the connection is closed. At most HOOKFLOW_REQUEST_TIMEOUT.
     */
    headersTimeoutMs: number;
    /**
     * HOOKFLOW_BODY_TIMEOUT (seconds, default 15): longest silence while a request body is being
     * received (before its first byte too) before the request is answered 408 and its connection
     * closed. A stalled upload holds its place this long, not the whole request timeout; 15 s lets a
     * slow mobile link ride out a few TCP retransmissions (1 + 2 + 4 + 8 s of back-off).
     */
    bodyTimeoutMs: number;
    /**
     * HOOKFLOW_REQUEST_TIMEOUT (seconds, default 60): a client has this long to send a whole request,
     * headers and body (a body that trickles in never falls silent for HOOKFLOW_BODY_TIMEOUT); 16 MiB
     * in 60 s needs ~2.3 Mbit/s: raise it for large uploads over slow links.
     */
    requestTimeoutMs: number;
    /**
     * HOOKFLOW_METRICS_TOKEN: a bearer token (16+ characters) that may read `/metrics` and nothing
     * else, for Prometheus; unset (default): only API tokens (and signed-in sessions) may.
     */
    metricsToken: string | undefined;
  };
  store: {
    /** HOOKFLOW_DATA_DIR / --data-dir: folder of the SQLite file (and generated keys). */
    dataDir: string;
    /** HOOKFLOW_DATABASE_URL / --database-url: `postgres://…` switches to PostgreSQL. */
    databaseUrl: string | undefined;
    /** HOOKFLOW_SQLITE_SYNCHRONOUS: FULL (default: a 2xx survives power loss) or NORMAL (survives a process crash). */
    sqliteSynchronous: 'FULL' | 'NORMAL';
  };
  ingest: {
    /** HOOKFLOW_INGEST_MAX_PENDING: accepted-but-not-yet-committed requests before answering 503 overloaded. */
    maxPending: number;
    /**
     * HOOKFLOW_INGEST_RUN_PURE: run a workflow without effects (`set`, `filter`, `respond`…: see
     * Engine.runsBeforeCommit) where its request is accepted, before the commit, and store it
     * finished (default true); false leaves every execution to the executor (`hookflow start`) or
     * the workers (`hookflow webhook`).
     */
    runPure: boolean;
  };
  executor: {
    /**
     * HOOKFLOW_EXECUTOR_CONCURRENCY: executions of one process that compute at once (default 8).
     * One waiting on an outbound call holds no such slot (queue/compute-slots.ts).
     */
    concurrency: number;
    /**
     * HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT: executions one process holds at once, computing or waiting
     * on an outbound call (default 1 000).
     */
    maxInFlight: number;
    /**
     * HOOKFLOW_LEASE_MS: how long a claimed execution stays locked to its worker without a
     * heartbeat (renewed every third of it); a crashed worker's executions run again after it
     * (default 30 000, 1 000 to 3 600 000).
     */
    leaseMs: number;
  };
  audit: {
    /**
     * HOOKFLOW_AUDIT_MAX_AGE: audit log rows (SPEC 11b) older than this are deleted: a duration
     * like `365d`, or `off` to keep them all (default 365d).
     */
    maxAgeMs: number | undefined;
  };
  executions: {
    /**
     * HOOKFLOW_EXECUTIONS_MAX_AGE: finished executions (and their uploaded files) older than this
     * are deleted: a number and a unit, `90s`, `30m`, `12h`, `7d`; `off` keeps them (default 14d,
     * n8n's default too).
     */
    maxAgeMs: number | undefined;
    /**
     * HOOKFLOW_EXECUTIONS_MAX_COUNT: at most this many executions are kept; the oldest finished
     * ones beyond it are deleted (default: no limit; queued and running ones are never deleted).
     */
    maxCount: number | undefined;
  };
  engine: {
    /** HOOKFLOW_ALLOW_PRIVATE_NETWORK: let `http` steps reach loopback, link-local and private addresses (default false). */
    allowPrivateNetwork: boolean;
    /**
     * HOOKFLOW_SQL_PRIVATE_NETWORKS: private ranges (IP addresses or CIDR, comma-separated) that
     * `sql` steps may connect to although HOOKFLOW_ALLOW_PRIVATE_NETWORK is false (default none).
     */
    sqlPrivateNetworks: readonly string[];
    /** HOOKFLOW_EXECUTION_TIMEOUT_MS: time budget of one execution, all steps together (default 300 000). */
    executionTimeoutMs: number;
    /** HOOKFLOW_FOREACH_MAX_ITEMS: most elements one `forEach` step runs over (default 10 000). */
    foreachMaxItems: number;
    /**
     * HOOKFLOW_ENGINE_MEMORY_MB: the executor's engine thread's JavaScript heap, in MB (default 512,
     * 64 to 65 536). Past it the thread is ended (not the process), and the executions on it run
     * again; one on the thread when it runs out a second time is failed.
     */
    memoryMb: number;
    /** HOOKFLOW_CODE_MEMORY_MB: memory one `code` step run may use (default 64). */
    codeMemoryMb: number;
    /** HOOKFLOW_CODE_TIMEOUT_MS: time one `code` step run may take (default 1 000). */
    codeTimeoutMs: number;
    /**
     * HOOKFLOW_EXECUTION_RECORD_MAX_BYTES: most bytes one execution's record (its step records,
     * with their inputs and outputs) may hold (default 4 MiB, 1 MiB to 1 GiB). A value past it is
     * stored as `{"$omitted": "too large for the execution record", "bytes": N}`; later steps still
     * get the value itself. A waiting execution's checkpoint may hold 8 times this in all.
     */
    recordMaxBytes: number;
    /**
     * HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST: connections the `http` steps of one process open to one
     * origin (scheme, host, port) at most (default 128, 1 to 65 536); further requests to it wait
     * for a free connection, within their step's `timeoutMs`.
     */
    httpMaxSocketsPerHost: number;
  };
  security: {
    /** HOOKFLOW_ENCRYPTION_KEY: key for secrets at rest (generated into the data dir when unset). */
    encryptionKey: string | undefined;
  };
  mailer: {
    /**
     * HOOKFLOW_MAILER_CREDENTIAL: the id or name of an `smtp` credential; invitations of new members
     * are then also mailed through it (SPEC 11b). Unset: no mail, the link is shown to copy.
     */
    credential: string | undefined;
  };
  log: {
    /** HOOKFLOW_LOG_LEVEL / --log-level: fatal | error | warn | info | debug | trace | silent. */
    level: string;
    /**
     * HOOKFLOW_LOG_FORMAT: `json` (a JSON document a line, for machines), `pretty` (readable lines,
     * for people), or `auto` (the default): pretty when the server's stdout is a terminal.
     */
    format: 'auto' | 'json' | 'pretty';
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

type Parser<T> = (raw: string) => T | { error: string };

const integer =
  (min: number, max: number): Parser<number> =>
  (raw) => {
    const n = Number(raw);
    return Number.isInteger(n) && n >= min && n <= max
      ? n
      : { error: `a whole number from ${min} to ${max}` };
  };

const oneOf =
  <T extends string>(...values: T[]): Parser<T> =>
  (raw) => {
    const found = values.find((x) => x.toLowerCase() === raw.toLowerCase());
    return found ?? { error: `one of ${values.join(', ')}` };
  };

const boolean: Parser<boolean> = (raw) => {
  const v = raw.trim().toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return { error: 'true or false' };
};

const addressList: Parser<string[]> = (raw) => {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = invalidCidr(items);
  return bad === undefined ? items : { error: `IP addresses or CIDR ranges separated by commas (${bad})` };
};

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90s`, `30m`, `12h`, `7d` in milliseconds, or `off`. */
const durationOrOff: Parser<number | 'off'> = (raw) => {
  const v = raw.trim().toLowerCase();
  if (v === 'off') return 'off';
  const m = /^(\d{1,9})(s|m|h|d)$/.exec(v);
  const ms = m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : 0;
  return ms >= 1_000 ? ms : { error: 'a duration such as 90s, 30m, 12h or 7d (at least 1s), or off' };
};

const text: Parser<string> = (raw) => (raw.trim() === '' ? { error: 'a non-empty value' } : raw.trim());

const httpUrl: Parser<string> = (raw) => {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return { error: 'an http:// or https:// URL' };
    if (url.search || url.hash) return { error: 'a URL without query string or fragment' };
    return url.toString().replace(/\/+$/, '');
  } catch {
    return { error: 'an absolute URL such as https://hooks.example.com' };
  }
};

/** hookflow's own first path segments: a base path starting with one would hide those routes. */
const OWN_SEGMENTS = new Set(['api', 'webhook', 'webhook-test', 'assets']);

const baseUrl: Parser<string> = (raw) => {
  const url = httpUrl(raw);
  if (typeof url !== 'string') return url;
  const first = new URL(url).pathname.split('/')[1] ?? '';
  if (OWN_SEGMENTS.has(first.toLowerCase()))
    return { error: `a URL whose path does not start with /${first} (hookflow's own routes start so)` };
  return url;
};

const postgresUrl: Parser<string> = (raw) => {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
      return { error: 'a postgres:// URL (leave it unset for the embedded SQLite store)' };
    }
    return raw;
  } catch {
    return { error: 'a URL such as postgres://user@127.0.0.1:5432/hookflow' };
  }
};

const encryptionKey: Parser<string> = (raw) =>
  raw.length >= 32 ? raw : { error: 'at least 32 characters (e.g. `openssl rand -base64 32`)' };

const metricsToken: Parser<string> = (raw) =>
  /^[\x21-\x7e]{16,1024}$/.test(raw)
    ? raw
    : { error: '16 to 1024 printable characters without spaces (e.g. `openssl rand -hex 32`)' };

interface Setting<T> {
  env: string;
  flag?: string;
  parse: Parser<T>;
}

// The schema: every setting, its env name, its flag. Defaults are applied in loadConfig below.
const SETTINGS = {
  port: { env: 'HOOKFLOW_PORT', flag: 'port', parse: integer(0, 65535) },
  host: { env: 'HOOKFLOW_HOST', flag: 'host', parse: text },
  baseUrl: { env: 'HOOKFLOW_BASE_URL', flag: 'base-url', parse: baseUrl },
  maxBodyBytes: { env: 'HOOKFLOW_MAX_BODY_BYTES', parse: integer(1024, 1024 * 1024 * 1024) },
  trustProxy: { env: 'HOOKFLOW_TRUST_PROXY', parse: addressList },
  maxConcurrentRequests: { env: 'HOOKFLOW_MAX_CONCURRENT_REQUESTS', parse: integer(1, 1_000_000) },
  maxWaitingResponses: { env: 'HOOKFLOW_MAX_WAITING_RESPONSES', parse: integer(1, 1_000_000) },
  headersTimeout: { env: 'HOOKFLOW_HEADERS_TIMEOUT', parse: integer(1, 3600) },
  bodyTimeout: { env: 'HOOKFLOW_BODY_TIMEOUT', parse: integer(1, 3600) },
  requestTimeout: { env: 'HOOKFLOW_REQUEST_TIMEOUT', parse: integer(1, 24 * 3600) },
  dataDir: { env: 'HOOKFLOW_DATA_DIR', flag: 'data-dir', parse: text },
  databaseUrl: { env: 'HOOKFLOW_DATABASE_URL', flag: 'database-url', parse: postgresUrl },
  sqliteSynchronous: { env: 'HOOKFLOW_SQLITE_SYNCHRONOUS', parse: oneOf('FULL', 'NORMAL') },
  ingestMaxPending: { env: 'HOOKFLOW_INGEST_MAX_PENDING', parse: integer(1, 1_000_000) },
  ingestRunPure: { env: 'HOOKFLOW_INGEST_RUN_PURE', parse: boolean },
  executorConcurrency: { env: 'HOOKFLOW_EXECUTOR_CONCURRENCY', parse: integer(1, 1024) },
  executorMaxInFlight: { env: 'HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT', parse: integer(1, 100_000) },
  leaseMs: { env: 'HOOKFLOW_LEASE_MS', parse: integer(1_000, 60 * 60 * 1000) },
  executionsMaxAge: { env: 'HOOKFLOW_EXECUTIONS_MAX_AGE', parse: durationOrOff },
  auditMaxAge: { env: 'HOOKFLOW_AUDIT_MAX_AGE', parse: durationOrOff },
  executionsMaxCount: { env: 'HOOKFLOW_EXECUTIONS_MAX_COUNT', parse: integer(1, 1_000_000_000) },
  allowPrivateNetwork: { env: 'HOOKFLOW_ALLOW_PRIVATE_NETWORK', parse: boolean },
  sqlPrivateNetworks: { env: 'HOOKFLOW_SQL_PRIVATE_NETWORKS', parse: addressList },
  executionTimeoutMs: { env: 'HOOKFLOW_EXECUTION_TIMEOUT_MS', parse: integer(1_000, 24 * 60 * 60 * 1000) },
  foreachMaxItems: { env: 'HOOKFLOW_FOREACH_MAX_ITEMS', parse: integer(1, 1_000_000) },
  engineMemoryMb: { env: 'HOOKFLOW_ENGINE_MEMORY_MB', parse: integer(64, 65_536) },
  codeMemoryMb: { env: 'HOOKFLOW_CODE_MEMORY_MB', parse: integer(1, 1024) },
  codeTimeoutMs: { env: 'HOOKFLOW_CODE_TIMEOUT_MS', parse: integer(10, 60_000) },
  recordMaxBytes: {
    env: 'HOOKFLOW_EXECUTION_RECORD_MAX_BYTES',
    parse: integer(1024 * 1024, 1024 * 1024 * 1024),
  },
  httpMaxSocketsPerHost: { env: 'HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST', parse: integer(1, 65_536) },
  encryptionKey: { env: 'HOOKFLOW_ENCRYPTION_KEY', parse: encryptionKey },
  mailerCredential: { env: 'HOOKFLOW_MAILER_CREDENTIAL', parse: text },
  metricsToken: { env: 'HOOKFLOW_METRICS_TOKEN', parse: metricsToken },
  logLevel: {
    env: 'HOOKFLOW_LOG_LEVEL',
    flag: 'log-level',
    parse: oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
  },
  logFormat: { env: 'HOOKFLOW_LOG_FORMAT', parse: oneOf('auto', 'json', 'pretty') },
} satisfies Record<string, Setting<unknown>>;

type Settings = typeof SETTINGS;
type Values = { [K in keyof Settings]: Exclude<ReturnType<Settings[K]['parse']>, { error: string }> };

/** The flags loadConfig understands, for `--help` and for the CLI's own argument check. */
export const CONFIG_FLAGS: readonly string[] = Object.values(SETTINGS).flatMap((s: Setting<unknown>) =>
  s.flag ? [s.flag] : [],
);

export interface LoadConfigInput {
  env?: Record<string, string | undefined>;
  /** Flags of the form `--name value` or `--name=value`; flags win over env. */
  argv?: readonly string[];
  cwd?: string;
}

export function loadConfig({ env = {}, argv = [], cwd = '.' }: LoadConfigInput = {}): Config {
  const flags = parseFlags(argv);
  const problems: string[] = [];
  const values: Partial<Record<keyof Settings, unknown>> = {};
  for (const [key, setting] of Object.entries(SETTINGS) as [keyof Settings, Setting<unknown>][]) {
    const fromFlag = setting.flag ? flags.get(setting.flag) : undefined;
    const raw = fromFlag ?? env[setting.env];
    if (raw === undefined || raw === '') continue;
    const parsed = setting.parse(raw);
    if (isError(parsed)) {
      const name = fromFlag !== undefined ? `--${setting.flag}` : setting.env;
      problems.push(`${name}=${JSON.stringify(raw)} is invalid: expected ${parsed.error}`);
    } else {
      values[key] = parsed;
    }
  }
  const v = values as Partial<Values>;
  // Node refuses a headers timeout longer than the request timeout (and the head is part of the request).
  const headersTimeout = v.headersTimeout ?? 20;
  const requestTimeout = v.requestTimeout ?? 60;
  if (headersTimeout > requestTimeout) {
    problems.push(
      `HOOKFLOW_HEADERS_TIMEOUT=${headersTimeout} is invalid: expected at most HOOKFLOW_REQUEST_TIMEOUT (${requestTimeout})`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const port = v.port ?? 5678;
  const baseUrl = v.baseUrl ?? `http://localhost:${port}`;
  const config: Config = {
    http: {
      port,
      host: v.host ?? '0.0.0.0',
      baseUrl,
      basePath: new URL(baseUrl).pathname.replace(/\/+$/, ''),
      maxBodyBytes: v.maxBodyBytes ?? 16 * 1024 * 1024,
      trustProxy: v.trustProxy ?? [],
      maxConcurrentRequests: v.maxConcurrentRequests ?? 2048,
      maxWaitingResponses: v.maxWaitingResponses ?? 8192,
      headersTimeoutMs: headersTimeout * 1000,
      bodyTimeoutMs: (v.bodyTimeout ?? 15) * 1000,
      requestTimeoutMs: requestTimeout * 1000,
      metricsToken: v.metricsToken,
    },
    store: {
      dataDir: path.resolve(cwd, v.dataDir ?? 'data'),
      databaseUrl: v.databaseUrl,
      sqliteSynchronous: v.sqliteSynchronous ?? 'FULL',
    },
    ingest: { maxPending: v.ingestMaxPending ?? 10_000, runPure: v.ingestRunPure ?? true },
    executor: {
      concurrency: v.executorConcurrency ?? 8,
      maxInFlight: v.executorMaxInFlight ?? 1_000,
      leaseMs: v.leaseMs ?? 30_000,
    },
    audit: { maxAgeMs: v.auditMaxAge === 'off' ? undefined : (v.auditMaxAge ?? 365 * UNIT_MS.d) },
    executions: {
      maxAgeMs: v.executionsMaxAge === 'off' ? undefined : (v.executionsMaxAge ?? 14 * UNIT_MS.d),
      maxCount: v.executionsMaxCount,
    },
    engine: {
      allowPrivateNetwork: v.allowPrivateNetwork ?? false,
      sqlPrivateNetworks: v.sqlPrivateNetworks ?? [],
      executionTimeoutMs: v.executionTimeoutMs ?? 300_000,
      foreachMaxItems: v.foreachMaxItems ?? 10_000,
      memoryMb: v.engineMemoryMb ?? 512,
      codeMemoryMb: v.codeMemoryMb ?? 64,
      codeTimeoutMs: v.codeTimeoutMs ?? 1_000,
      // model/record-json.ts DEFAULT_RECORD_MAX_BYTES (config imports no model).
      recordMaxBytes: v.recordMaxBytes ?? 4 * 1024 * 1024,
      httpMaxSocketsPerHost: v.httpMaxSocketsPerHost ?? 128,
    },
    security: { encryptionKey: v.encryptionKey },
    mailer: { credential: v.mailerCredential },
    log: { level: v.logLevel ?? 'info', format: v.logFormat ?? 'auto' },
  };
  return deepFreeze(config);
}

function isError(x: unknown): x is { error: string } {
  return typeof x === 'object' && x !== null && 'error' in x;
}

function parseFlags(argv: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>();
  const known = new Set(CONFIG_FLAGS);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) continue;
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (!known.has(name)) continue;
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined) throw new ConfigError([`--${name} needs a value`]);
    flags.set(name, value);
  }
  return flags;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
