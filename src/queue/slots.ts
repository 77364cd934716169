/**
 * How many executions one worker holds, and when it takes more: the one place where a worker alone
 * on its store (embedded SQLite, `hookflow start`) and one of many on a shared store (PostgreSQL,
 * `hookflow worker`) differ. worker.ts asks this object instead of branching on the store.
 *
 * Two bounds (SPEC 7d). HOOKFLOW_EXECUTOR_CONCURRENCY executions compute at once: that is the
 * engine thread's (compute-slots.ts). Up to HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT are in flight, most of
 * them waiting on an outbound call: that is this policy's. An execution is in flight from the
 * moment it starts here until its slot is freed (see `freeBeforeRecord`); handed-over executions
 * waiting to start (`ready`) and those ingest reserved room for (`reserved`) are held too.
 *
 * Of those in flight, only HOOKFLOW_EXECUTOR_CONCURRENCY may be computing or waiting for a slot on
 * the thread (the others wait on the outside world): more would only wait there, each with its
 * run's state alive across the thread's garbage collections, and would take the CPU the accepting
 * event loop needs while a load lasts (`computeRoom` below).
 */

/** What a worker holds now. */
export interface Holding {
  /** Started: on the engine thread (or about to be), or recording their results. */
  inFlight: number;
  /** Trigger JSON (characters) of those in flight. */
  inFlightBytes: number;
  /** Claimed or handed over, not started yet. */
  ready: number;
  /** Room ingest reserved for handed-over executions being written. */
  reserved: number;
  /** Trigger JSON (characters) of the `ready` ones. */
  readyBytes: number;
  /** Of those in flight, waiting on the outside world (engine-runner.ts): the others compute. */
  outside: number;
}

/**
 * Alone on its store, a claim takes up to this many rows per compute slot beyond what is in flight
 * (less what waits here): a restart releases every `running` row there, and each claim is a
 * transaction of group commit. A backlog of 20 000 routed executions (the bench's switch + code
 * step) drained at 2 080–2 230 executions/s with 2 per slot and at 2 450–3 600/s with 8
 * (alternated, three runs each).
 */
const CLAIM_PER_SLOT = 8;

/**
 * Handed-over executions are taken only under 64 KiB of JSON each, at most 4 MiB in all waiting to
 * start; bigger ones are stored queued and read back from the store in their turn.
 */
export const ADOPT_MAX_ITEM_BYTES = 64 * 1024;
export const ADOPT_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Executions in flight hold their trigger JSON here and on the engine thread: past this much of
 * it, none more starts (nor is claimed) until some finish, whatever the in-flight cap. 1 000
 * executions of 1 MB items would otherwise hold 2 GB; 5 000 small ones (the bench's io case) are
 * far below it.
 */
export const IN_FLIGHT_MAX_BYTES = 64 * 1024 * 1024;

export interface SlotPolicy {
  readonly name: 'embedded' | 'shared';
  /** The executions that count against the in-flight cap. */
  held(h: Holding): number;
  /** Whether one more execution (of `bytes` trigger JSON) may start now. */
  canStart(h: Holding, bytes: number): boolean;
  /** How many rows one claim may take now (0: claim nothing). */
  claimRoom(h: Holding): number;
  /** The trigger JSON one claim may read (undefined: no bound beyond the row count). */
  claimMaxChars(h: Holding): number | undefined;
  /** Whether a new execution of `bytes` trigger JSON may be handed over (stored claimed by this worker). */
  admits(h: Holding, bytes: number): boolean;
  /**
   * Whether an execution's slot is freed once the engine is done, before its result is recorded.
   * Alone on its store, yes: the next one runs during the group commit, and nobody else could
   * claim a row this process holds. On a shared store no: a worker never holds more `running`
   * rows than its cap, and one that dies strands at most that many.
   */
  readonly freeBeforeRecord: boolean;
  /**
   * Who is told of a new execution stored queued: every worker (a bus notice), or, alone on the
   * store, this worker directly (a notice would also count as news of a backlog).
   */
  readonly tellQueued: 'everyone' | 'self';
  /** Whether every `running` row at start belongs to a process that is gone (released at once). */
  readonly ownsRunningRows: boolean;
}

export function slotPolicy({
  shared,
  concurrency,
  maxInFlight,
}: {
  shared: boolean;
  concurrency: number;
  maxInFlight: number;
}): SlotPolicy {
  // Room to start more: under the cap, under the compute bound, and under the bytes bound (one
  // execution always may).
  const underBytes = (h: Holding, bytes: number) =>
    h.inFlight === 0 || h.inFlightBytes + bytes <= IN_FLIGHT_MAX_BYTES;
  // Computing or waiting for a slot on the engine thread: one run per compute slot. Two (one
  // computing, one waiting to take the slot without a round trip to the event loop) kept the thread
  // busy while the accepting event loop was, and took the CPU it needed. Side by side with 6c3e95a
  // (before the in-flight cap), the bench's routed case (switch + code step) accepted 0.905–0.929
  // as many requests while the load lasted with two, 0.972–1.072 with one; the whole work (load +
  // drain) went at 1.03–1.07 of 6c3e95a's rate with two, 0.94–1.00 with one. Senders are answered
  // first: what they sent is stored and waits its turn. The io case (`webhook → http (100 ms) →
  // set`) drains 1 053–1 060/s with one on SQLite (two: 1 083–1 116/s) and 1 029/s on PostgreSQL
  // (two: 943/s). Starting every claimed run at once (up to 1 000) cost 863–902 µs of CPU per
  // routed request against 553–596 µs.
  const computeRoom = (h: Holding) => concurrency - (h.inFlight - h.outside);
  const canStart = (h: Holding, bytes: number) =>
    h.inFlight < maxInFlight && computeRoom(h) > 0 && underBytes(h, bytes);
  // Not started yet, counted against both bounds.
  const waiting = (h: Holding) => h.ready + h.reserved;
  const admits = (h: Holding, bytes: number) =>
    bytes <= ADOPT_MAX_ITEM_BYTES &&
    h.inFlight + waiting(h) < maxInFlight &&
    waiting(h) < CLAIM_PER_SLOT * concurrency &&
    underBytes(h, h.readyBytes + bytes) &&
    h.readyBytes + bytes <= ADOPT_MAX_BYTES;
  if (shared)
    return {
      name: 'shared',
      // Handed-over rows waiting or reserved are `running` rows of this worker already.
      held: (h) => h.inFlight + h.ready + h.reserved,
      canStart,
      // Up to the cap, whatever computes: rows wait here (running, under this worker's lease) for
      // room to start. Claims bounded by the compute room too took 16 rows a round trip, and the
      // io case on PostgreSQL drained 325 executions/s instead of 1 110.
      claimRoom: (h) => (underBytes(h, 0) ? Math.max(0, maxInFlight - (h.inFlight + waiting(h))) : 0),
      claimMaxChars: () => undefined,
      admits,
      freeBeforeRecord: false,
      tellQueued: 'everyone',
      ownsRunningRows: false,
    };
  return {
    name: 'embedded',
    held: (h) => h.inFlight,
    canStart,
    // Rows claimed wait here only while none may start: a claim comes when one may.
    claimRoom: (h) => {
      const free = canStart(h, 0) ? Math.min(maxInFlight - h.inFlight, computeRoom(h)) : 0;
      if (free <= 0) return 0;
      return Math.max(free, CLAIM_PER_SLOT * concurrency - (h.inFlight + waiting(h)));
    },
    claimMaxChars: (h) => Math.max(1, ADOPT_MAX_BYTES - h.readyBytes),
    admits,
    freeBeforeRecord: true,
    tellQueued: 'self',
    ownsRunningRows: true,
  };
}
