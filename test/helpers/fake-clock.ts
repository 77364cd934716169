/**
 * A clock tests drive (src/schedules/clock.ts): time stands still until the test moves it.
 * `advanceTo` fires the timers that come due on the way, in time order, each at its own time, and
 * after each waits for `settle` (the scheduler's `settled()`), so the work a timer started (a claim,
 * the next timer) is done before time moves on. `jump` moves time without firing anything: the
 * process was not running.
 */
import type { Clock } from '../../src/schedules/clock.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Set<Timer>();

  constructor(start: string | number) {
    this.#now = typeof start === 'string' ? Date.parse(start) : start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn };
    this.#timers.add(timer);
    return () => this.#timers.delete(timer);
  }

  get pending(): number {
    return this.#timers.size;
  }

  async advanceTo(target: string | number, settle: () => Promise<void>): Promise<void> {
    const end = typeof target === 'string' ? Date.parse(target) : target;
    for (;;) {
      await settle();
      let next: Timer | undefined;
      for (const t of this.#timers)
        if (t.at <= end && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      if (!next) break;
      this.#timers.delete(next);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
    }
    this.#now = Math.max(this.#now, end);
  }

  advanceBy(ms: number, settle: () => Promise<void>): Promise<void> {
    return this.advanceTo(this.#now + ms, settle);
  }

  /** Move time on without firing timers (nothing ran meanwhile). */
  jump(to: string | number): void {
    this.#now = typeof to === 'string' ? Date.parse(to) : to;
  }
}
