import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('defaults to the embedded store on port 5678', () => {
    const config = loadConfig({ env: {}, cwd: '/srv' });
    expect(config.http).toEqual({
      port: 5678,
      host: '0.0.0.0',
      baseUrl: 'http://localhost:5678',
      basePath: '',
      maxBodyBytes: 16 * 1024 * 1024,
      trustProxy: [],
      maxConcurrentRequests: 2048,
      maxWaitingResponses: 8192,
      headersTimeoutMs: 20_000,
      bodyTimeoutMs: 15_000,
      requestTimeoutMs: 60_000,
    });
    expect(config.store.dataDir).toBe(path.resolve('/srv', 'data'));
    expect(config.store.databaseUrl).toBeUndefined();
    expect(Object.isFrozen(config.http)).toBe(true);
  });

  it.each([
    [{ HOOKFLOW_PORT: '8080' }, (c: ReturnType<typeof loadConfig>) => c.http.port, 8080],
    [
      { HOOKFLOW_PORT: '8080' },
      (c: ReturnType<typeof loadConfig>) => c.http.baseUrl,
      'http://localhost:8080',
    ],
    [
      { HOOKFLOW_METRICS_TOKEN: 'prometheus-0123456789' },
      (c: ReturnType<typeof loadConfig>) => c.http.metricsToken,
      'prometheus-0123456789',
    ],
    [
      { HOOKFLOW_BASE_URL: 'https://hooks.example.com/' },
      (c: ReturnType<typeof loadConfig>) => c.http.baseUrl,
      'https://hooks.example.com',
    ],
    [
      { HOOKFLOW_BASE_URL: 'https://example.com/hf' },
      (c: ReturnType<typeof loadConfig>) => c.http.baseUrl,
      'https://example.com/hf',
    ],
    [
      { HOOKFLOW_BASE_URL: 'https://example.com/hf/' },
      (c: ReturnType<typeof loadConfig>) => c.http.basePath,
      '/hf',
    ],
    [
      { HOOKFLOW_BASE_URL: 'https://example.com/tools/hook%20flow' },
      (c: ReturnType<typeof loadConfig>) => c.http.basePath,
      '/tools/hook%20flow',
    ],
    [
      { HOOKFLOW_BASE_URL: 'https://hooks.example.com' },
      (c: ReturnType<typeof loadConfig>) => c.http.basePath,
      '',
    ],
    [
      { HOOKFLOW_DATABASE_URL: 'postgres://u@h/db' },
      (c: ReturnType<typeof loadConfig>) => c.store.databaseUrl,
      'postgres://u@h/db',
    ],
    [{ HOOKFLOW_LOG_LEVEL: 'DEBUG' }, (c: ReturnType<typeof loadConfig>) => c.log.level, 'debug'],
    [{ HOOKFLOW_MAX_BODY_BYTES: '2048' }, (c: ReturnType<typeof loadConfig>) => c.http.maxBodyBytes, 2048],
    [
      { HOOKFLOW_TRUST_PROXY: '10.0.0.1, 192.168.0.0/16' },
      (c: ReturnType<typeof loadConfig>) => c.http.trustProxy.join(' '),
      '10.0.0.1 192.168.0.0/16',
    ],
    [{ HOOKFLOW_BODY_TIMEOUT: '5' }, (c: ReturnType<typeof loadConfig>) => c.http.bodyTimeoutMs, 5_000],
    [
      { HOOKFLOW_HEADERS_TIMEOUT: '10' },
      (c: ReturnType<typeof loadConfig>) => c.http.headersTimeoutMs,
      10_000,
    ],
    [
      { HOOKFLOW_REQUEST_TIMEOUT: '300' },
      (c: ReturnType<typeof loadConfig>) => c.http.requestTimeoutMs,
      300_000,
    ],
    [
      { HOOKFLOW_HEADERS_TIMEOUT: '30', HOOKFLOW_REQUEST_TIMEOUT: '30' },
      (c: ReturnType<typeof loadConfig>) => c.http.headersTimeoutMs,
      30_000,
    ],
  ])('reads %j', (env, pick, expected) => {
    expect(pick(loadConfig({ env }))).toBe(expected);
  });

  it.each<[Record<string, string>, { maxAgeMs: number | undefined; maxCount: number | undefined }]>([
    [{}, { maxAgeMs: 14 * 86_400_000, maxCount: undefined }],
    [{ HOOKFLOW_EXECUTIONS_MAX_AGE: '12h' }, { maxAgeMs: 12 * 3_600_000, maxCount: undefined }],
    [{ HOOKFLOW_EXECUTIONS_MAX_AGE: '90s' }, { maxAgeMs: 90_000, maxCount: undefined }],
    [{ HOOKFLOW_EXECUTIONS_MAX_AGE: '30m' }, { maxAgeMs: 1_800_000, maxCount: undefined }],
    [
      { HOOKFLOW_EXECUTIONS_MAX_AGE: 'OFF', HOOKFLOW_EXECUTIONS_MAX_COUNT: '100000' },
      { maxAgeMs: undefined, maxCount: 100_000 },
    ],
  ])('reads executions retention from %j', (env, expected) => {
    expect(loadConfig({ env }).executions).toEqual(expected);
  });

  it('lets flags win over env', () => {
    const config = loadConfig({
      env: { HOOKFLOW_PORT: '1000' },
      argv: ['--port', '2000', '--data-dir=/tmp/x'],
    });
    expect(config.http.port).toBe(2000);
    expect(config.store.dataDir).toBe('/tmp/x');
  });

  it.each([
    [
      { HOOKFLOW_PORT: 'eighty' },
      'HOOKFLOW_PORT="eighty" is invalid: expected a whole number from 0 to 65535',
    ],
    [{ HOOKFLOW_PORT: '70000' }, 'HOOKFLOW_PORT'],
    [{ HOOKFLOW_BASE_URL: 'localhost:5678' }, 'HOOKFLOW_BASE_URL'],
    [{ HOOKFLOW_BASE_URL: 'ftp://x' }, 'an http:// or https:// URL'],
    [{ HOOKFLOW_BASE_URL: 'https://example.com/api' }, 'does not start with /api'],
    [{ HOOKFLOW_BASE_URL: 'https://example.com/Webhook/x' }, 'does not start with /Webhook'],
    [{ HOOKFLOW_DATABASE_URL: 'mysql://x/y' }, 'a postgres:// URL'],
    [{ HOOKFLOW_LOG_LEVEL: 'loud' }, 'one of fatal, error'],
    [{ HOOKFLOW_ENCRYPTION_KEY: 'short' }, 'at least 32 characters'],
    [{ HOOKFLOW_METRICS_TOKEN: 'too-short' }, 'HOOKFLOW_METRICS_TOKEN'],
    [{ HOOKFLOW_METRICS_TOKEN: 'has a space in it, sadly' }, '16 to 1024 printable characters'],
    [{ HOOKFLOW_MAX_BODY_BYTES: '-1' }, 'HOOKFLOW_MAX_BODY_BYTES'],
    [{ HOOKFLOW_TRUST_PROXY: '10.0.0.1, proxy.local' }, '"proxy.local" is not an IP address or CIDR range'],
    [{ HOOKFLOW_EXECUTIONS_MAX_AGE: '7 days' }, 'a duration such as 90s, 30m, 12h or 7d'],
    [{ HOOKFLOW_EXECUTIONS_MAX_AGE: '0s' }, 'HOOKFLOW_EXECUTIONS_MAX_AGE'],
    [{ HOOKFLOW_EXECUTIONS_MAX_COUNT: '0' }, 'HOOKFLOW_EXECUTIONS_MAX_COUNT'],
    [
      { HOOKFLOW_BODY_TIMEOUT: '0' },
      'HOOKFLOW_BODY_TIMEOUT="0" is invalid: expected a whole number from 1 to 3600',
    ],
    [{ HOOKFLOW_BODY_TIMEOUT: '2.5' }, 'HOOKFLOW_BODY_TIMEOUT'],
    [{ HOOKFLOW_HEADERS_TIMEOUT: 'soon' }, 'HOOKFLOW_HEADERS_TIMEOUT'],
    [{ HOOKFLOW_REQUEST_TIMEOUT: '0' }, 'HOOKFLOW_REQUEST_TIMEOUT'],
    [{ HOOKFLOW_HEADERS_TIMEOUT: '90' }, 'expected at most HOOKFLOW_REQUEST_TIMEOUT (60)'],
    [
      { HOOKFLOW_HEADERS_TIMEOUT: '20', HOOKFLOW_REQUEST_TIMEOUT: '10' },
      'HOOKFLOW_HEADERS_TIMEOUT=20 is invalid: expected at most HOOKFLOW_REQUEST_TIMEOUT (10)',
    ],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig({ env })).toThrow(ConfigError);
    expect(() => loadConfig({ env })).toThrow(message);
  });

  it('reports every bad key at once', () => {
    try {
      loadConfig({ env: { HOOKFLOW_PORT: 'x', HOOKFLOW_LOG_LEVEL: 'y' } });
      expect.unreachable();
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(2);
    }
  });
});

describe('step limits (SPEC 7b)', () => {
  it('default to 10 000 forEach items, 64 MB and 1 000 ms per code run', () => {
    const { engine } = loadConfig({ env: {}, cwd: '/srv' });
    expect([engine.foreachMaxItems, engine.codeMemoryMb, engine.codeTimeoutMs]).toEqual([10_000, 64, 1_000]);
  });

  it('are read from the environment, and nonsense is refused naming the variable', () => {
    const { engine } = loadConfig({
      env: {
        HOOKFLOW_FOREACH_MAX_ITEMS: '50',
        HOOKFLOW_CODE_MEMORY_MB: '16',
        HOOKFLOW_CODE_TIMEOUT_MS: '300',
      },
      cwd: '/srv',
    });
    expect([engine.foreachMaxItems, engine.codeMemoryMb, engine.codeTimeoutMs]).toEqual([50, 16, 300]);
    for (const [name, value] of [
      ['HOOKFLOW_FOREACH_MAX_ITEMS', '0'],
      ['HOOKFLOW_CODE_MEMORY_MB', 'lots'],
      ['HOOKFLOW_CODE_TIMEOUT_MS', '-1'],
    ])
      expect(() => loadConfig({ env: { [name!]: value! }, cwd: '/srv' }), name).toThrow(name);
  });
});

describe('HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST (SPEC 7d)', () => {
  it('defaults to 128 connections per origin and is read from the environment', () => {
    expect(loadConfig({ env: {}, cwd: '/srv' }).engine.httpMaxSocketsPerHost).toBe(128);
    const env = { HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST: '2' };
    expect(loadConfig({ env, cwd: '/srv' }).engine.httpMaxSocketsPerHost).toBe(2);
  });

  it.each(['0', '-1', 'many', '1.5'])('refuses %s, naming the variable', (value) => {
    const env = { HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST: value };
    expect(() => loadConfig({ env, cwd: '/srv' })).toThrow('HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST');
  });
});
