/**
 * At-least-once (SPEC 10, issue "workflow engine"): an execution that is running when its process
 * is SIGKILLed is resumed by the restarted process from its first step, as attempt 2.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { json, tempDir } from '../helpers/server.js';

const children: ServerProcess[] = [];
let downstream: http.Server | undefined;
afterAll(() => {
  for (const c of children) c.child.kill('SIGKILL');
  downstream?.close();
});

describe('crash during an execution', () => {
  it('runs it again after a restart, as attempt 2', async () => {
    // A downstream that holds the first call until the process is gone, and answers later calls.
    let calls = 0;
    let firstCall!: () => void;
    const firstCallSeen = new Promise<void>((r) => (firstCall = r));
    downstream = http.createServer((_req, res) => {
      calls++;
      if (calls === 1) {
        firstCall();
        return; // never answered: the process dies meanwhile
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ok: true, call: calls }));
    });
    await new Promise<void>((r) => downstream!.listen(0, '127.0.0.1', r));
    const port = (downstream.address() as AddressInfo).port;

    const env = { HOOKFLOW_DATA_DIR: tempDir(), HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' };
    const token = (await runCli(['tokens', 'create', '--name', 'resume'], env)).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    const first = await startServerProcess(env);
    children.push(first);
    const wf = await json(
      await fetch(`${first.url}/api/v1/workflows`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          name: 'resume',
          trigger: { path: 'resume' },
          steps: [
            {
              name: 'call',
              type: 'http',
              method: 'POST',
              url: `http://127.0.0.1:${port}/hook`,
              body: '{{ body }}',
            },
          ],
        }),
      }),
    );
    await fetch(`${first.url}/api/v1/workflows/${wf.id}/activate`, { method: 'POST', headers });
    const { executionId } = await json(
      await fetch(`${first.url}/webhook/resume`, {
        method: 'POST',
        body: new URLSearchParams({ order: '42' }),
      }),
    );
    await firstCallSeen;
    const running = await json(await fetch(`${first.url}/api/v1/executions/${executionId}`, { headers }));
    expect(running.status).toBe('running');
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await startServerProcess(env);
    children.push(second);
    const deadline = Date.now() + 15_000;
    let execution = running;
    while (execution.status === 'running' || execution.status === 'queued') {
      if (Date.now() > deadline) throw new Error(`still ${execution.status}`);
      await new Promise((r) => setTimeout(r, 100));
      execution = await json(await fetch(`${second.url}/api/v1/executions/${executionId}`, { headers }));
    }
    expect(execution.status).toBe('succeeded');
    expect(execution.attempt).toBe(2);
    expect(execution.steps[0].output.body).toEqual({ ok: true, call: 2 });
    expect(calls).toBe(2);
    second.child.kill('SIGTERM');
    await second.exited;
  }, 60_000);
});
