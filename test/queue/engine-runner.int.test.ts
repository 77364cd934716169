/**
 * The executor's engine thread (queue/engine-runner.ts) as the worker uses it: runs started in one
 * turn travel as one message, and each workflow version is sent to the thread once, then named by
 * its key — past MAX_SENT_VERSIONS versions the thread forgets them all and is sent them again.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineRunner } from '../../src/queue/engine-runner.js';
import { workflowFactory } from '../engine/workflow-fixture.js';

const log = pino({ level: 'silent' });

describe('the engine runner', () => {
  let runner: EngineRunner | undefined;
  afterEach(async () => {
    await runner?.close();
    runner = undefined;
  });

  const start = () =>
    new EngineRunner({
      options: { allowPrivateNetwork: false, executionTimeoutMs: 30_000 },
      computeSlots: 2,
      log,
    });

  it('runs each execution with its own version, across more versions than the thread keeps', async () => {
    runner = start();
    const workflow = workflowFactory('runner-versions');
    const versions = Array.from({ length: 520 }, (_, i) =>
      workflow([{ name: 'tag', type: 'set', fields: { version: i, got: '{{ body.n }}' } }]),
    );
    const run = (v: number, n: number) =>
      runner!.run(versions[v]!, JSON.stringify({ body: { n } }), {
        executionId: `e-${v}-${n}`,
        mode: 'production',
      });
    // Every version twice in one turn (one message, the version sent once), then the first ones
    // again once the thread was told to forget them.
    const first = await Promise.all(versions.flatMap((_, v) => [run(v, v), run(v, 1000 + v)]));
    const again = await Promise.all([run(0, 7), run(1, 8), run(519, 9)]);
    const outputs = (results: typeof first) =>
      results.map((r) => {
        expect(r.status).toBe('succeeded');
        return JSON.parse(r.record!).at(-1).output;
      });
    expect(outputs(first)).toEqual(
      versions.flatMap((_, v) => [
        { version: v, got: v },
        { version: v, got: 1000 + v },
      ]),
    );
    expect(outputs(again)).toEqual([
      { version: 0, got: 7 },
      { version: 1, got: 8 },
      { version: 519, got: 9 },
    ]);
  });
});
