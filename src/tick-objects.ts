/**
 * Keeps one `process.nextTick` queue entry alive for the life of the process, so that the shape
 * (V8 map) of every later entry stays the one Node's `nextTick` was first compiled for.
 *
 * Why: `nextTick` builds each entry as an object literal with two computed symbol keys. V8 (11.3,
 * Node 20) records one map per such key in the function's feedback and, when it later sees any
 * other map there, marks the site megamorphic for good: no polymorphic state in between. The maps
 * of these entries die when no entry is alive across a full GC, and the next entry gets new ones.
 * A full GC while hookflow loads its modules does exactly that, so in `hookflow start` every
 * `nextTick` (five or six per webhook request, from Node's HTTP server and streams) went through
 * the runtime instead of optimised code: in on-CPU profiles under the workflow load, 2.6 µs a
 * request under `Runtime_DefineKeyedOwnPropertyInLiteral` alone, which the durable floor (a small
 * program, no full GC before its load) never spent; its feedback stayed monomorphic.
 *
 * The only handle on a queue entry is the `init` hook of async_hooks, which receives it: enabled
 * for one `nextTick` here, at the start of the process, and disabled at once (no hook is left to
 * slow anything down). The entry kept (~100 bytes) keeps its maps, and so the feedback, alive.
 */
import { createHook } from 'node:async_hooks';

let kept: object | undefined;

export function keepTickObjectShape(): void {
  if (kept) return;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') kept ??= resource;
    },
  });
  hook.enable();
  process.nextTick(() => undefined);
  hook.disable();
}
