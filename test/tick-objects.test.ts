import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * Runs `nextTick` as a process does while it starts (a few calls, then full GCs while its modules
 * load, then many calls) in a Node of its own with V8's test intrinsics, after `keepTickObjectShape`
 * (dist/, built by the global setup), and prints the feedback of `nextTick`.
 */
const SCRIPT = `
import { keepTickObjectShape } from ${JSON.stringify(new URL('../dist/tick-objects.js', import.meta.url).href)};
keepTickObjectShape();
const burst = async (n) => {
  for (let i = 0; i < n; i++) process.nextTick(() => undefined);
  await new Promise((resolve) => setImmediate(resolve));
};
for (let i = 0; i < 20; i++) await burst(10);
gc();
gc();
for (let i = 0; i < 200; i++) await burst(100);
%DebugPrint(process.nextTick);
`;

describe('keepTickObjectShape', () => {
  it("keeps the feedback of nextTick's queue entries monomorphic across full GCs", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--allow-natives-syntax', '--input-type=module', '-e', SCRIPT],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    // One slot per key of the entry's object literal ({ [async_id_symbol], [trigger_async_id_symbol],
    // callback, args }). Without the kept entry, Node 20 prints MEGAMORPHIC for all but the first.
    const states = [...stdout.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]);
    expect(states.length).toBeGreaterThan(0);
    expect(states.every((state) => state === 'MONOMORPHIC')).toBe(true);
  });
});
