/**
 * The first start's setup code (SPEC 11): until the owner account exists, creating it needs a
 * one-time code that the server printed (or `hookflow setup-code` did). Without it, anyone who
 * reached the port first became the owner, also of an installation already driven by API tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Accounts } from '../../src/accounts/accounts.js';
import { AppError } from '../../src/errors.js';
import { startCluster } from '../helpers/cluster.js';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { eventually, json, startTestServer, type TestServer, tempDir } from '../helpers/server.js';

const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };

const setup = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/api/v1/auth/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** The code in a printed `Create the owner account: <base>/#setup-code=<code>` line. */
const PRINTED = /^Create the owner account: (\S+)\/#setup-code=([0-9a-f]{32})$/m;

describe('setup code, in one process', () => {
  let server: TestServer;
  beforeAll(async () => {
    // Behind a trusted proxy, so that each request can come from an address of its own.
    server = await startTestServer({ env: { HOOKFLOW_TRUST_PROXY: '127.0.0.1' } });
  });
  afterAll(() => server.close());

  const from = (address: string, body: unknown) => setup(server.url, body, { 'x-forwarded-for': address });
  const users = () => server.hookflow.store.db.selectFrom('users').select('email').execute();
  const storedCodes = () => server.hookflow.store.db.selectFrom('setup_codes').selectAll().execute();

  it('is issued at start, stored only as a hash, and never shown by /auth/status', async () => {
    const code = server.setupCode!;
    expect(code).toMatch(/^[0-9a-f]{32}$/);
    const stored = await storedCodes();
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(code);

    const status = await fetch(`${server.url}/api/v1/auth/status`);
    const text = await status.text();
    expect(JSON.parse(text)).toEqual({ setupRequired: true, user: null, csrfToken: null });
    expect(text).not.toContain(code);
  });

  it('refuses a setup without a code, or with a wrong one, with 403 setup_code_required; nothing is created', async () => {
    const missing = await from('198.51.100.1', OWNER);
    expect(missing.status).toBe(403);
    const body = await json(missing);
    expect(body.code).toBe('setup_code_required');
    expect(body.hint).toContain('hookflow setup-code');

    const wrong = await from('198.51.100.1', { ...OWNER, setupCode: 'f'.repeat(32) });
    expect(wrong.status).toBe(403);
    expect((await json(wrong)).code).toBe('setup_code_required');

    // A code of another shape, and the right code's hash (what a leaked database would hold).
    const [row] = await storedCodes();
    for (const setupCode of ['', 'not a code', row!.code_hash]) {
      const res = await from('198.51.100.2', { ...OWNER, setupCode });
      expect(res.status, setupCode).toBe(403);
    }
    expect(await users()).toEqual([]);
    expect((await json(await fetch(`${server.url}/api/v1/auth/status`))).setupRequired).toBe(true);
  });

  it('refuses a code past its 24 hours', async () => {
    const later = new Accounts({ store: server.hookflow.store, now: () => Date.now() + 24 * 3_600_000 + 1 });
    const err = await later.setup(OWNER.email, OWNER.password, server.setupCode, '192.0.2.1').catch((e) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('setup_code_required');
    expect(await users()).toEqual([]);
  });

  it('throttles an address after 5 wrong codes with 429 and Retry-After, the right code included', async () => {
    const guess = () => from('203.0.113.9', { ...OWNER, setupCode: '0'.repeat(32) });
    for (let i = 0; i < 5; i++) expect((await guess()).status).toBe(403);
    const blocked = await guess();
    expect(blocked.status).toBe(429);
    expect((await json(blocked)).code).toBe('rate_limited');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // Throttled means throttled: the right code from that address waits too.
    const right = await from('203.0.113.9', { ...OWNER, setupCode: server.setupCode });
    expect(right.status).toBe(429);
    expect(await users()).toEqual([]);
  });

  it('accepts the code (any other address, pasted with spaces and capitals), once: all codes go with it', async () => {
    // Several codes are valid at once: a newer one does not invalidate the one printed at start.
    const newer = await new Accounts({ store: server.hookflow.store }).issueSetupCode();
    expect(newer).toMatch(/^[0-9a-f]{32}$/);
    expect(await storedCodes()).toHaveLength(2);

    const res = await from('203.0.113.10', { ...OWNER, setupCode: ` ${server.setupCode!.toUpperCase()} ` });
    expect(res.status).toBe(201);
    expect((await json(res)).user).toEqual({ id: expect.any(String), email: OWNER.email, role: 'owner' });
    expect(await users()).toEqual([{ email: OWNER.email }]);
    expect(await storedCodes()).toEqual([]);

    // Used: whichever code, the answer is now what it is once the owner exists.
    for (const setupCode of [server.setupCode, newer]) {
      const again = await from('203.0.113.11', {
        email: 'late@example.com',
        password: 'another password',
        setupCode,
      });
      expect(again.status).toBe(409);
      expect((await json(again)).code).toBe('setup_done');
    }
    // And no new code is issued for an installation that has its owner.
    expect(await new Accounts({ store: server.hookflow.store }).issueSetupCode()).toBeUndefined();
    expect(await storedCodes()).toEqual([]);
  });
});

describe('setup code of `hookflow start` and `hookflow setup-code`', () => {
  let server: ServerProcess;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = tempDir();
    server = await startServerProcess({ HOOKFLOW_DATA_DIR: dataDir });
  });
  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
  });

  it('prints the setup address on start; `hookflow setup-code` prints another code, accepted by the running server', async () => {
    const printed = await eventually(async () => PRINTED.exec(server.output()) ?? undefined);
    expect(printed[1]).toBe(`http://localhost:${new URL(server.url).port}`);
    const startCode = printed[2]!;

    const ran = await runCli(['setup-code'], { HOOKFLOW_DATA_DIR: dataDir, HOOKFLOW_BASE_URL: server.url });
    expect(ran.code, ran.stderr).toBe(0);
    const lines = ran.stdout.trim().split('\n');
    const code = lines.at(-1)!;
    expect(code).toMatch(/^[0-9a-f]{32}$/);
    expect(code).not.toBe(startCode);
    expect(lines.at(-2)).toBe(`Create the owner account: ${server.url}/#setup-code=${code}`);

    const wrong = await setup(server.url, {
      ...OWNER,
      setupCode: code.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
    });
    expect(wrong.status).toBe(403);
    const res = await setup(server.url, { ...OWNER, setupCode: code });
    expect(res.status).toBe(201);
    // Used up, the one printed at start with it.
    expect((await setup(server.url, { ...OWNER, setupCode: startCode })).status).toBe(409);

    const after = await runCli(['setup-code'], { HOOKFLOW_DATA_DIR: dataDir });
    expect(after.code).toBe(1);
    expect(after.stdout).toBe('');
    expect(after.stderr).toContain('owner account already exists');
  });
});

describe('setup code across processes on PostgreSQL', () => {
  it('a code printed by one `hookflow webhook` process is accepted by another', async () => {
    const cluster = await startCluster({ webhooks: 2, workers: 0 });
    try {
      const [a, b] = cluster.webhooks as [(typeof cluster.webhooks)[0], (typeof cluster.webhooks)[0]];
      const printedA = await eventually(async () => PRINTED.exec(a.output()) ?? undefined);
      const printedB = await eventually(async () => PRINTED.exec(b.output()) ?? undefined);
      expect(printedA[1]).toBe(a.url);
      expect(printedA[2]).not.toBe(printedB[2]);

      expect((await setup(b.url, OWNER)).status).toBe(403);
      const res = await setup(b.url, { ...OWNER, setupCode: printedA[2] });
      expect(res.status).toBe(201);
      expect((await setup(a.url, { ...OWNER, setupCode: printedB[2] })).status).toBe(409);
      const { rows } = await cluster.sql.query('select count(*)::int as n from setup_codes');
      expect(rows[0].n).toBe(0);
    } finally {
      await cluster.close();
    }
  }, 90_000);
});
