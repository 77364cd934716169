/**
 * "A 2xx means the request is committed" (SPEC 3, FIELD-NOTES 3): clients post while the server
 * is SIGKILLed; after a restart on the same data dir every request that got a 2xx is present as
 * an execution, and the queued ones are run to completion.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type ServerProcess, runCli, startServerProcess } from '../helpers/process.js';
import { json, tempDir } from '../helpers/server.js';

const children: ServerProcess[] = [];
afterAll(() => {
  for (const c of children) c.child.kill('SIGKILL');
});

describe('crash safety', () => {
  it('keeps every acknowledged request across a SIGKILL', async () => {
    const dataDir = tempDir();
    const env = { HOOKFLOW_DATA_DIR: dataDir, HOOKFLOW_LOG_LEVEL: 'warn' };
    const token = (await runCli(['tokens', 'create', '--name', 'crash'], env)).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    const first = await startServerProcess(env);
    children.push(first);
    const wf = await json(
      await fetch(`${first.url}/api/v1/workflows`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ name: 'crash', trigger: { path: 'crash' } }),
      }),
    );
    expect(
      (await fetch(`${first.url}/api/v1/workflows/${wf.id}/activate`, { method: 'POST', headers: auth }))
        .status,
    ).toBe(200);

    // 20 clients post in a loop until the server dies under them.
    const acknowledged: string[] = [];
    let stop = false;
    const client = async (n: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await fetch(`${first.url}/webhook/crash`, {
            method: 'POST',
            body: `client=${n}&i=${i}`,
          });
          if (res.ok) acknowledged.push((await json(res)).executionId);
        } catch {
          return; // connection refused or reset: the process is gone
        }
      }
    };
    const clients = Array.from({ length: 20 }, (_, n) => client(n));
    while (acknowledged.length < 300) await new Promise((r) => setTimeout(r, 10));
    first.child.kill('SIGKILL');
    await first.exited;
    stop = true;
    await Promise.all(clients);
    expect(acknowledged.length).toBeGreaterThanOrEqual(300);

    const second = await startServerProcess(env);
    children.push(second);
    const missing: string[] = [];
    for (const id of acknowledged) {
      const res = await fetch(`${second.url}/api/v1/executions/${id}`, { headers: auth });
      if (res.status !== 200) missing.push(id);
    }
    expect(missing).toEqual([]);

    // Executions that were queued or running when the process died are resumed and finish.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const pending = await Promise.all(
        ['queued', 'running'].map(async (status) => {
          const res = await fetch(`${second.url}/api/v1/executions?status=${status}&limit=1`, {
            headers: auth,
          });
          return (await json(res)).items.length;
        }),
      );
      if (pending.every((n) => n === 0)) break;
      if (Date.now() > deadline) throw new Error(`executions still pending: ${pending}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 60_000);
});
