/**
 * A clock tests drive (src/shared/clock.ts): time stands still until the test moves it. Injected
 * into the queue, the worker, retention and the schedulers: leases lapse, backoffs end, waits and
 * ticks come due when the test says so, not after a sleep. Only the time those read moves: the
 * store, the bus and the engine keep real time.
 *
 * `advanceTo`/`advanceBy` fire the timers that come due on the way, in time order, each at its own
 * time, and after each wait for `settle` (the scheduler's `settled()`), so the work a timer started
 * is done before time moves on; `advance` does the same with a turn of the event loop as `settle`.
 * `jump` moves time without firing anything: the process was not running.
 */
import type { Cancel, Clock } from '../../src/shared/clock.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  /** An interval's period; undefined for a one-shot timer. */
  every: number | undefined;
}

const turn = () => new Promise<void>((r) => setImmediate(r));

export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Set<Timer>();

  constructor(start: string | number = Date.now()) {
    this.#now = typeof start === 'string' ? Date.parse(start) : start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(ms: number, fn: () => void): Cancel {
    return this.#add(fn, ms, undefined);
  }

  setTimeout(fn: () => void, ms: number): Cancel {
    return this.#add(fn, ms, undefined);
  }

  setInterval(fn: () => void, ms: number): Cancel {
    return this.#add(fn, ms, Math.max(1, ms));
  }

  /** Timers pending. */
  get pending(): number {
    return this.#timers.size;
  }

  async advanceTo(target: string | number, settle: () => Promise<void> = turn): Promise<void> {
    const end = typeof target === 'string' ? Date.parse(target) : target;
    for (;;) {
      await settle();
      let next: Timer | undefined;
      for (const t of this.#timers)
        if (t.at <= end && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      if (!next) break;
      if (next.every === undefined) this.#timers.delete(next);
      else next.at += next.every;
      this.#now = Math.max(this.#now, next.at - (next.every ?? 0));
      next.fn();
    }
    this.#now = Math.max(this.#now, end);
    await settle();
  }

  advanceBy(ms: number, settle: () => Promise<void> = turn): Promise<void> {
    return this.advanceTo(this.#now + ms, settle);
  }

  /** Moves time forward by `ms`, firing what comes due on the way, a turn of the event loop after each. */
  advance(ms: number): Promise<void> {
    return this.advanceBy(ms);
  }

  /** Move time on without firing timers (nothing ran meanwhile). */
  jump(to: string | number): void {
    this.#now = typeof to === 'string' ? Date.parse(to) : to;
  }

  #add(fn: () => void, ms: number, every: number | undefined): Cancel {
    const timer: Timer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, every };
    this.#timers.add(timer);
    return () => this.#timers.delete(timer);
  }
}
