/**
 * The engine thread's compute slots (queue/compute-slots.ts) with the real engine: a run gives its
 * slot up while a step waits on a promise and takes one again before it goes on; runs back from a
 * wait are served before runs not started yet.
 */
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/run.js';
import { withStepTypes } from '../../src/engine/steps/index.js';
import { defineStep } from '../../src/engine/steps/types.js';
import { ComputeSlots } from '../../src/queue/compute-slots.js';
import { isPromise } from '../../src/shared/maybe-promise.js';
import { workflowFactory } from '../engine/workflow-fixture.js';

const workflowOf = workflowFactory('compute-slots');

describe('ComputeSlots', () => {
  it('hands out its size at once, then queues, returning runs first', async () => {
    const slots = new ComputeSlots(2);
    const a = slots.slot();
    const b = slots.slot();
    const c = slots.slot();
    expect(a.acquire()).toBeUndefined();
    expect(b.acquire()).toBeUndefined();
    expect(slots.taken).toBe(2);
    const order: string[] = [];
    const cGot = c.acquire();
    expect(isPromise(cGot)).toBe(true);
    void (cGot as Promise<void>).then(() => order.push('c (new)'));
    // `a` waits on the network, then comes back while `c` still waits for its first slot.
    a.release();
    await Promise.resolve();
    expect(order).toEqual(['c (new)']);
    const aBack = a.acquire();
    void (aBack as Promise<void>).then(() => order.push('a (returning)'));
    const d = slots.slot();
    void (d.acquire() as Promise<void>).then(() => order.push('d (new)'));
    b.release();
    await Promise.resolve();
    expect(order).toEqual(['c (new)', 'a (returning)']);
    c.release();
    await Promise.resolve();
    expect(order).toEqual(['c (new)', 'a (returning)', 'd (new)']);
    // Releasing twice, or a slot not held, frees nothing more.
    c.release();
    expect(slots.taken).toBe(2);
  });

  it('a run holds no slot while its step waits on a promise, and one again after', async () => {
    const slots = new ComputeSlots(1);
    let release: (() => void) | undefined;
    const seen: number[] = [];
    const outside = defineStep({
      type: 'outside',
      pure: false,
      description: 'Waits for the test.',
      config: Type.Object({}, { additionalProperties: false }),
      run: () => {
        seen.push(slots.taken);
        return new Promise((resolve) => {
          release = () => resolve({ output: 'back' });
        });
      },
    });
    const after = defineStep({
      type: 'after',
      pure: true,
      description: 'Records the slots taken.',
      config: Type.Object({}, { additionalProperties: false }),
      run: () => {
        seen.push(slots.taken);
        return { output: 'done' };
      },
    });
    const engine = new Engine({
      allowPrivateNetwork: false,
      executionTimeoutMs: 10_000,
      stepTypes: withStepTypes(outside, after),
    });
    const compute = slots.slot();
    expect(compute.acquire()).toBeUndefined();
    const ran = engine.run(
      workflowOf([
        { name: 'call', type: 'outside' },
        { name: 'next', type: 'after' },
      ]),
      {},
      { executionId: 'e1', mode: 'test', compute },
    );
    await new Promise((r) => setImmediate(r));
    // Waiting: the slot is free for another run.
    expect(slots.taken).toBe(0);
    const other = slots.slot();
    expect(other.acquire()).toBeUndefined();
    release!();
    await new Promise((r) => setImmediate(r));
    // Back from its wait, the run waits for a slot: the other run holds the only one.
    expect(seen).toEqual([1]);
    other.release();
    const result = await ran;
    expect(result.status).toBe('succeeded');
    expect(seen).toEqual([1, 1]);
    compute.release();
    expect(slots.taken).toBe(0);
    await engine.close();
  });
});
