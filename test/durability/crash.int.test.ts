/**
 * "A 2xx means the request is committed" (SPEC 3, FIELD-NOTES 3): clients post while the server
 * is SIGKILLed; after a restart on the same data dir every request that got a 2xx is present as
 * an execution, and the queued ones are run to completion. Once per way an accepted execution
 * can be stored: queued or handed to the local executor (an `http` step), or run before the
 * commit and stored finished (pure steps, or none) — the latter two under full load (64 clients
 * on kept-alive connections, so group commits are large).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess, startWithWorkflow } from '../helpers/process.js';
import { json, tempDir } from '../helpers/server.js';

const children: ServerProcess[] = [];
let downstream: http.Server;
let downstreamUrl: string;
beforeAll(async () => {
  // What the `http` step calls: answers at once.
  downstream = http.createServer((req, res) => {
    req.resume();
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => downstream.listen(0, '127.0.0.1', resolve));
  downstreamUrl = `http://127.0.0.1:${(downstream.address() as AddressInfo).port}/hook`;
});
afterAll(() => {
  for (const c of children) c.child.kill('SIGKILL');
  downstream?.close();
});

// The clients post text bodies (`client=3&i=17` as text/plain).
const PURE_STEPS = [
  {
    name: 'shape',
    type: 'set',
    fields: { text: '{{ $string(body) }}', size: '{{ $length($string(body)) }}' },
  },
  { name: 'keep', type: 'filter', condition: '{{ size > 0 }}' },
  { name: 'label', type: 'set', keepInput: true, fields: { label: '{{ $uppercase(text) }}' } },
];

describe('crash safety', () => {
  it.each([
    ['no steps', 20, () => []],
    ['pure steps (run before the commit), full load', 64, () => PURE_STEPS],
    [
      'an http step (handed to the executor), full load',
      64,
      () => [{ name: 'notify', type: 'http', method: 'POST', url: downstreamUrl, body: '{{ body }}' }],
    ],
  ])(
    'keeps every acknowledged request across a SIGKILL: %s',
    async (_case, clients, steps) => {
      const dataDir = tempDir();
      const env = {
        HOOKFLOW_DATA_DIR: dataDir,
        HOOKFLOW_LOG_LEVEL: 'warn',
        HOOKFLOW_ALLOW_PRIVATE_NETWORK: 'true',
      };
      const { server: first, auth } = await startWithWorkflow(env, {
        name: 'crash',
        trigger: { path: 'crash' },
        steps: steps(),
      });
      children.push(first);

      // The clients post in a loop until the server dies under them.
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
      const running = Array.from({ length: clients }, (_, n) => client(n));
      while (acknowledged.length < 1_000) await new Promise((r) => setTimeout(r, 10));
      first.child.kill('SIGKILL');
      await first.exited;
      stop = true;
      await Promise.all(running);
      expect(acknowledged.length).toBeGreaterThanOrEqual(1_000);

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
      // …and succeed: an attempt cut off by the crash is run again, not recorded as failed.
      const failed = await json(
        await fetch(`${second.url}/api/v1/executions?status=failed&limit=5`, { headers: auth }),
      );
      expect(failed.items).toEqual([]);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    },
    60_000,
  );
});
