/**
 * A `code` step stops on time whatever its input, and shares nothing with other runs, over real
 * HTTP: a body whose 65 536 keys collide in QuickJS's atom hash (its JSON.parse alone: 32.5 s) and
 * `includes` over a 300 KB body (one call: ~10 s) are both cut off at the step's 1 000 ms limit
 * while another workflow's `lastStep` call (with a code step of its own) keeps answering within a
 * second; a workflow that patches the array iterator changes nothing for the next.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';
import { finishedExecution } from './int-helpers.js';
import { collidingObject } from './quickjs-collisions.js';

const LIMIT_MS = 1_000;
/** How far past the limit a cut-off step may end here (the brief: ~100–300 ms; a loaded machine). */
const CUT_OFF_SLACK_MS = 500;
/** What another workflow's `lastStep` call may take meanwhile. */
const ANSWER_MS = 1_000;

let server: TestServer;
/** Workflows whose executions must all succeed. */
const bystanders: string[] = [];

const post = (path: string, body: unknown) =>
  fetch(`${server.url}/webhook/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

beforeAll(async () => {
  server = await startTestServer({ env: { HOOKFLOW_CODE_TIMEOUT_MS: String(LIMIT_MS) } });
  const code = (name: string, path: string, source: string, lastStep = false) =>
    createActiveWorkflow(server, {
      name,
      trigger: { path, ...(lastStep ? { response: { mode: 'lastStep', timeoutMs: 20_000 } } : {}) },
      steps: [{ type: 'code', name: 'js', source }],
    });
  await code('ignores the body', 'ignores', 'return 1');
  await code('reads the body', 'reads', 'return Object.keys($input.body).length');
  await code('scans the body', 'scans', "return $input.body.text.includes('a'.repeat(20000) + 'b')");
  bystanders.push((await code('bystander', 'bystander', 'return { doubled: $input.body.n * 2 }', true)).id);
  await code(
    'patches',
    'patches',
    [
      'const ArrayIterator = Object.getPrototypeOf([][Symbol.iterator]());',
      'try { ArrayIterator.next = function () { return { done: (this.d = !this.d) === false, value: 1000 }; }; } catch {}',
      'try { ArrayIterator.leak = $input.body; } catch {}',
      'return "patched"',
    ].join('\n'),
  );
  const sums = await code(
    'sums',
    'sums',
    'let sum = 0; for (const l of [21, 21]) sum += l; return { sum, leak: Object.getPrototypeOf([][Symbol.iterator]()).leak ?? null }',
    true,
  );
  bystanders.push(sums.id);
  // Warm: the engine thread and its code thread have started.
  expect((await post('bystander', { n: 1 })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

/**
 * Sends `body` to `path`; until its execution has finished, calls the bystander's `lastStep`
 * webhook every 100 ms. Returns the execution and the bystander's answer times.
 */
async function whileBystanderCalls(path: string, body: string) {
  const res = await post(path, body);
  expect(res.status).toBe(200);
  const id = res.headers.get('x-hookflow-execution-id')!;
  await res.arrayBuffer();
  const answers: number[] = [];
  let n = 0;
  for (;;) {
    const { status } = (await server.api('GET', `/api/v1/executions/${id}`)).body;
    if (!['queued', 'running'].includes(status)) break;
    const started = performance.now();
    const call = await post('bystander', { n: ++n });
    expect(call.status).toBe(200);
    expect(await call.json()).toEqual({ doubled: 2 * n });
    answers.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { execution: await finishedExecution(server, id, 60_000), answers };
}

const stepMs = (step: { startedAt: string; finishedAt: string }) =>
  Date.parse(step.finishedAt) - Date.parse(step.startedAt);

describe('a code step stops on time whatever its input', () => {
  const colliding = JSON.stringify({ ...collidingObject(16) });

  it('`return 1` never parses a body of 65 536 colliding keys', async () => {
    const { execution } = await whileBystanderCalls('ignores', colliding);
    expect(execution.status).toBe('succeeded');
    expect(stepMs(execution.steps[0])).toBeLessThan(LIMIT_MS);
  }, 60_000);

  it('code that reads it is cut off at its limit while another workflow answers within a second', async () => {
    const { execution, answers } = await whileBystanderCalls('reads', colliding);
    expect(execution.status).toBe('failed');
    expect(execution.error.message).toMatch(/longer than its limit of 1000 ms \(HOOKFLOW_CODE_TIMEOUT_MS\)/);
    expect(stepMs(execution.steps[0])).toBeGreaterThanOrEqual(LIMIT_MS);
    expect(stepMs(execution.steps[0])).toBeLessThan(LIMIT_MS + CUT_OFF_SLACK_MS);
    expect(answers.length).toBeGreaterThan(0);
    expect(Math.max(...answers)).toBeLessThan(ANSWER_MS);
  }, 60_000);

  it('one `includes` over a 300 KB body is cut off at the limit, not when it returns (~10 s)', async () => {
    const { execution, answers } = await whileBystanderCalls(
      'scans',
      JSON.stringify({ text: 'a'.repeat(300_000) }),
    );
    expect(execution.status).toBe('failed');
    expect(execution.error.message).toMatch(/longer than its limit of 1000 ms/);
    expect(stepMs(execution.steps[0])).toBeLessThan(LIMIT_MS + CUT_OFF_SLACK_MS);
    expect(Math.max(...answers)).toBeLessThan(ANSWER_MS);
  }, 60_000);
});

describe('code runs share nothing', () => {
  it('a patched array iterator (and what it stored) is not seen by the next run', async () => {
    const res = await post('patches', { secret: 'of the first sender' });
    const id = res.headers.get('x-hookflow-execution-id')!;
    const patched = await finishedExecution(server, id);
    expect(patched.status).toBe('succeeded');
    const sums = await post('sums', {});
    expect(sums.status).toBe(200);
    expect(await sums.json()).toEqual({ sum: 42, leak: null });
  });
});

it('no bystander failed', async () => {
  for (const id of bystanders) {
    const res = await server.api('GET', `/api/v1/executions?workflowId=${id}&status=failed`);
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([]);
  }
});
