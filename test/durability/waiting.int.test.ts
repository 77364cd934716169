/**
 * A waiting execution survives a SIGKILL (SPEC 7b `wait`: "resumes at that time on any executor,
 * across restarts"): `hookflow start` is killed while an execution waits, started again, and the
 * execution resumes from its checkpoint: the step before the wait is not sent again.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type Downstream, startDownstream } from '../engine/int-helpers.js';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { json, tempDir } from '../helpers/server.js';

const children: ServerProcess[] = [];
let downstream: Downstream | undefined;
afterAll(async () => {
  for (const c of children) c.child.kill('SIGKILL');
  await downstream?.close();
});

describe('crash while an execution waits', () => {
  it('resumes it after a restart, from where it waited', async () => {
    downstream = await startDownstream();
    const env = { HOOKFLOW_DATA_DIR: tempDir(), HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true' };
    const token = (await runCli(['tokens', 'create', '--name', 'waiting'], env)).stdout
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
          name: 'waits',
          trigger: { path: 'waits' },
          steps: [
            {
              name: 'before',
              type: 'http',
              method: 'POST',
              url: `${downstream.url}/echo`,
              body: '{{ {"step": "before"} }}',
            },
            { name: 'pause', type: 'wait', seconds: 3 },
            {
              name: 'after',
              type: 'http',
              method: 'POST',
              url: `${downstream.url}/echo`,
              body: '{{ {"step": "after"} }}',
            },
          ],
        }),
      }),
    );
    expect(
      (await fetch(`${first.url}/api/v1/workflows/${wf.id}/activate`, { method: 'POST', headers })).status,
    ).toBe(200);
    const { executionId } = await json(
      await fetch(`${first.url}/webhook/waits`, {
        method: 'POST',
        body: new URLSearchParams({ order: '7' }),
      }),
    );
    const get = async (url: string) =>
      json(await fetch(`${url}/api/v1/executions/${executionId}`, { headers }));
    const until = async (url: string, ok: (e: { status: string }) => boolean, ms: number) => {
      const deadline = Date.now() + ms;
      for (;;) {
        const e = await get(url);
        if (ok(e)) return e;
        if (Date.now() > deadline) throw new Error(`still ${e.status}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const waiting = await until(first.url, (e) => e.status === 'waiting', 10_000);
    expect(waiting.resumeAt).toEqual(expect.any(String));

    first.child.kill('SIGKILL');
    await first.exited;
    const second = await startServerProcess(env);
    children.push(second);
    // Still waiting after the restart (not re-run, not lost) until its time.
    const after = await get(second.url);
    if (Date.now() < Date.parse(waiting.resumeAt) - 200) expect(after.status).toBe('waiting');

    const done = await until(second.url, (e) => !['queued', 'running', 'waiting'].includes(e.status), 20_000);
    expect(done.status).toBe('succeeded');
    expect(done.steps.map((s: { name: string }) => s.name)).toEqual(['before', 'pause', 'after']);
    expect(Date.parse(done.finishedAt)).toBeGreaterThanOrEqual(Date.parse(waiting.resumeAt));
    const sent = downstream.received.map((r) => (r.body as { step: string }).step);
    expect(sent).toEqual(['before', 'after']);
    second.child.kill('SIGTERM');
    await second.exited;
  }, 60_000);
});
