/**
 * Time as the scheduler sees it, injected so tests drive it (test/helpers/fake-clock.ts): the
 * current time and a one-shot timer. The system clock's timers are unref'd (a schedule never keeps
 * a process alive on its own) and capped at setTimeout's limit (2^31-1 ms, about 24.8 days): a
 * timer that wakes early finds nothing due and sets the next one.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Calls `fn` once, `ms` from now; the returned function cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const timer = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    timer.unref();
    return () => clearTimeout(timer);
  },
};
