// The V8 flags a serving `hookflow` process runs with. bin/hookflow.js starts `start`, `webhook`
// and `worker` under them (as node's own arguments: V8 reads them before anything is allocated;
// `v8.setFlagsFromString` after start-up is documented as unpredictable, and NODE_OPTIONS does not
// accept them). vitest.config.ts gives the test workers the same, so the tests' servers run as
// production does. Measurements: docs/performance.md ("V8 flags").
export const NODE_FLAGS = Object.freeze([
  // V8 "pretenures" allocation sites whose objects often survive a scavenge: it allocates them in
  // the old generation from then on. Under load it did so for JSONata's evaluation objects (they
  // span many microtask turns), so every execution left ~6 KB of garbage that only a full
  // collection frees: with 6 000 three-step executions/s the old generation grew to ~150 MB between
  // collections and the peak RSS of `hookflow start` reached 260 MB. Without pretenuring they die
  // young: peak RSS ~156 MB, and scavenges got cheaper (8 000 executions/s instead of 7 200).
  '--no-allocation-site-pretenuring',
  // The old generation may grow by 20 % between full collections instead of V8's factor for this
  // heap size (up to 2×, less only near the limit): what a request leaves there (its item, row and
  // result live for a commit cycle or two, so scavenges promote them) is freed sooner. In the
  // bench's routed case (executions queued faster than the code step runs them) the main heap grew
  // 62 → 126 MB before a full collection, peak RSS 229–245 MB; with 20 %, 191 MB, as fast.
  '--heap-growing-percent=20',
]);
