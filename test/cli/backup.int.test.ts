/**
 * `hookflow backup` / `hookflow restore` (SPEC 12) on real `hookflow start` processes: a backup
 * taken while ~200 webhooks/s are being accepted, restored into a fresh dir, is served by a new
 * server with the same workflows, every execution acknowledged before the backup began, the same
 * stored file and a credential that still opens (its key came in the archive: --include-key).
 * A non-empty target, a damaged archive (the part named) and PostgreSQL are refused.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-dir.js';
import { MULTIPART, multipart, sha256 } from '../webhooks/webhook-http.js';

const SECRET = 'backup-bearer-token-42';

let receiver: http.Server;
let receiverUrl = '';
const auths: (string | undefined)[] = [];
const servers: ServerProcess[] = [];

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    auths.push(req.headers.authorization);
    req.resume();
    res.end('ok');
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of servers) {
    s.child.kill('SIGTERM');
    await s.exited;
  }
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
});

async function start(dataDir: string): Promise<ServerProcess> {
  const server = await startServerProcess({
    HOOKFLOW_DATA_DIR: dataDir,
    HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
    HOOKFLOW_LOG_LEVEL: 'warn',
  });
  servers.push(server);
  return server;
}

async function stop(server: ServerProcess): Promise<void> {
  server.child.kill('SIGTERM');
  await server.exited;
  servers.splice(servers.indexOf(server), 1);
}

/** An API client of a server process. */
function client(url: string, token: string) {
  return async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const json = text !== '' && (res.headers.get('content-type') ?? '').includes('json');
    // biome-ignore lint/suspicious/noExplicitAny: JSON from the API
    const parsed: any = json ? JSON.parse(text) : text;
    return { status: res.status, body: parsed };
  };
}

/** The offset of the first byte of `name`'s data in a tar archive, and its size. */
function tarPart(archive: Buffer, name: string): { offset: number; size: number } {
  for (let at = 0; at + 512 <= archive.length; ) {
    const entry = archive
      .subarray(at, at + 100)
      .toString('utf8')
      .replace(/\0.*$/s, '');
    if (entry === '') break;
    const size = Number.parseInt(
      archive
        .subarray(at + 124, at + 136)
        .toString('utf8')
        .trim(),
      8,
    );
    if (entry === name) return { offset: at + 512, size };
    at += 512 + Math.ceil(size / 512) * 512;
  }
  throw new Error(`no ${name} in the archive`);
}

describe('hookflow backup and restore', () => {
  const work = tempDir();
  const dataDir = path.join(work, 'data');
  const archive = path.join(work, 'hookflow.tar');

  it('restores a backup taken under ~200 webhooks/s with the same workflows, executions, files and credentials', async () => {
    const made = await runCli(['tokens', 'create', '--name', 'backup-test'], { HOOKFLOW_DATA_DIR: dataDir });
    expect(made.code).toBe(0);
    const token = made.stdout.trim().split('\n').at(-1)!;
    const source = await start(dataDir);
    const api = client(source.url, token);

    const cred = await api('POST', '/api/v1/credentials', {
      name: 'api',
      type: 'bearer',
      data: { token: SECRET },
    });
    expect(cred.status).toBe(201);
    for (const [name, steps] of [
      ['load', []],
      ['files', []],
      ['call', [{ name: 'call', type: 'http', url: `${receiverUrl}/x`, credential: cred.body.id }]],
    ] as const) {
      const wf = await api('POST', '/api/v1/workflows', { name, trigger: { path: name }, steps });
      expect(wf.status).toBe(201);
      expect((await api('POST', `/api/v1/workflows/${wf.body.id}/activate`)).status).toBe(200);
    }
    const upload = randomBytes(1024 * 1024 + 4321);
    const sent = await fetch(`${source.url}/webhook/files`, {
      method: 'POST',
      headers: { 'content-type': MULTIPART },
      body: multipart([{ name: 'doc', filename: 'doc.bin', type: 'application/octet-stream', data: upload }]),
    });
    expect(sent.status).toBe(200);
    const uploadExecution = await api(
      'GET',
      `/api/v1/executions/${sent.headers.get('x-hookflow-execution-id')}`,
    );
    const [file] = uploadExecution.body.trigger.files;
    expect(file.sha256).toBe(sha256(upload));

    // 200 webhooks/s (as many as the time since the start asks for, at every tick: timers drift
    // on a busy machine), each recorded with the time its 200 arrived.
    const acked: { id: string; at: number }[] = [];
    const failures: string[] = [];
    const inFlight = new Set<Promise<void>>();
    let n = 0;
    const fire = () => {
      const p = fetch(`${source.url}/webhook/load`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ n: n++ }),
      })
        .then(async (res) => {
          await res.arrayBuffer();
          if (res.status === 200)
            acked.push({ id: res.headers.get('x-hookflow-execution-id')!, at: Date.now() });
          else failures.push(String(res.status));
        })
        .catch((err: Error) => {
          failures.push(err.message);
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    };
    const loadStarted = Date.now();
    const load = setInterval(() => {
      while (n < ((Date.now() - loadStarted) * 200) / 1000) fire();
    }, 5);
    let backupStarted = 0;
    let backupEnded = 0;
    let ran: Awaited<ReturnType<typeof runCli>>;
    try {
      await new Promise((r) => setTimeout(r, 1500));
      backupStarted = Date.now();
      ran = await runCli(['backup', archive, '--include-key'], { HOOKFLOW_DATA_DIR: dataDir });
      backupEnded = Date.now();
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      clearInterval(load);
      await Promise.all(inFlight);
    }
    expect(ran.stderr).toContain('includes the encryption key');
    expect(ran.code, ran.stderr).toBe(0);
    expect(failures).toEqual([]);
    const before = acked.filter((a) => a.at < backupStarted);
    const during = acked.filter((a) => a.at >= backupStarted && a.at <= backupEnded);
    const rate = during.length / Math.max(0.001, (backupEnded - backupStarted) / 1000);
    console.log(
      `backup: ${backupEnded - backupStarted} ms, ${fs.statSync(archive).size} bytes; ${before.length} acked before, ${during.length} during (${rate.toFixed(0)}/s)`,
    );
    expect(before.length).toBeGreaterThan(150);
    expect(during.length).toBeGreaterThan(0);

    const restored = path.join(work, 'restored');
    const back = await runCli(['restore', archive, '--data-dir', restored], {});
    expect(back.code, back.stderr).toBe(0);
    expect(fs.existsSync(path.join(restored, 'encryption.key'))).toBe(true);

    const target = await start(restored);
    const api2 = client(target.url, token);
    const workflows = (await api('GET', '/api/v1/workflows?limit=100')).body.items;
    const workflows2 = (await api2('GET', '/api/v1/workflows?limit=100')).body.items;
    const shape = (w: { id: string; name: string; version: number; active: boolean }) => [
      w.id,
      w.name,
      w.version,
      w.active,
    ];
    expect(workflows2.map(shape)).toEqual(workflows.map(shape));
    const missing: string[] = [];
    for (const { id } of before)
      if ((await api2('GET', `/api/v1/executions/${id}`)).status !== 200) missing.push(id);
    expect(missing).toEqual([]);
    const download = await fetch(`${target.url}/api/v1/files/${file.id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(download.status).toBe(200);
    expect(sha256(Buffer.from(await download.arrayBuffer()))).toBe(sha256(upload));
    // The credential opens with the archive's key: the http step sends it.
    const call = await fetch(`${target.url}/webhook/call`, { method: 'POST' });
    expect(call.status).toBe(200);
    const id = call.headers.get('x-hookflow-execution-id');
    let execution: { status: string } | undefined;
    for (let i = 0; i < 200 && !['succeeded', 'failed'].includes(execution?.status ?? ''); i++) {
      await new Promise((r) => setTimeout(r, 50));
      execution = (await api2('GET', `/api/v1/executions/${id}`)).body;
    }
    expect(execution?.status).toBe('succeeded');
    expect(auths.at(-1)).toBe(`Bearer ${SECRET}`);
    await stop(target);
    await stop(source);
  }, 120_000);

  it('refuses a non-empty target dir', async () => {
    const ran = await runCli(['restore', archive, '--data-dir', dataDir], {});
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/is not empty/);
    expect(ran.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('refuses a damaged archive, naming the part, and writes nothing', async () => {
    const bytes = fs.readFileSync(archive);
    const part = tarPart(bytes, 'hookflow.sqlite');
    bytes[part.offset + Math.floor(part.size / 2)]! ^= 0x01;
    const damaged = path.join(work, 'damaged.tar');
    fs.writeFileSync(damaged, bytes);
    const target = path.join(work, 'from-damaged');
    const ran = await runCli(['restore', damaged, '--data-dir', target], {});
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/part hookflow\.sqlite is damaged/);
    expect(fs.existsSync(target)).toBe(false);
    expect(fs.readdirSync(work).filter((f) => f.includes('.restore-'))).toEqual([]);
  });

  it('stops on PostgreSQL with one line naming pg_dump and the key to keep', async () => {
    const out = path.join(work, 'pg.tar');
    const ran = await runCli(['backup', out], {
      HOOKFLOW_DATABASE_URL: 'postgres://hookflow@127.0.0.1:1/hookflow',
      HOOKFLOW_ENCRYPTION_KEY: 'pg-key-0123456789abcdefghijklmnopqrstuv',
    });
    expect(ran.code).toBe(2);
    const lines = ran.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('pg_dump');
    expect(lines[0]).toContain('HOOKFLOW_ENCRYPTION_KEY');
    expect(fs.existsSync(out)).toBe(false);
  });
});
