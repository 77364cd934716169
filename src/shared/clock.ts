/**
 * Time as the queue, the worker, retention and the schedulers read it, injected so that tests of
 * leases, backoff, waits and schedules move a fake clock (test/helpers/fake-clock.ts) instead of
 * sleeping. Timers are unref'd: none of them keeps a process alive.
 */
export interface Clock {
  /** Epoch ms. */
  now(): number;
  /** Calls `fn` once after `ms`; the answer cancels it. */
  setTimeout(fn: () => void, ms: number): Cancel;
  /** Calls `fn` every `ms`; the answer cancels it. */
  setInterval(fn: () => void, ms: number): Cancel;
  /**
   * Calls `fn` once, `ms` from now, however far (the system clock caps one timer at setTimeout's
   * limit, 2^31-1 ms: a timer that wakes early finds nothing due and sets the next one).
   */
  setTimer(ms: number, fn: () => void): Cancel;
}

export type Cancel = () => void;

const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
  setInterval(fn, ms) {
    const t = setInterval(fn, ms);
    t.unref();
    return () => clearInterval(t);
  },
  setTimer(ms, fn) {
    const t = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    t.unref();
    return () => clearTimeout(t);
  },
};

/** Resolves after `ms` on `clock`. */
export const sleep = (clock: Clock, ms: number): Promise<void> =>
  new Promise((resolve) => clock.setTimeout(resolve, ms));
