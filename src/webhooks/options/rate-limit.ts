/**
 * `options.rateLimit` (SPEC 5b): at most `requests` per `perSeconds` per trigger, counted in fixed
 * windows in this process's memory (cheap on the hot path; in distributed mode each webhook
 * process counts its own share — documented in docs/scaling.md).
 */
interface Window {
  start: number;
  count: number;
}

export class RateLimiter {
  readonly #windows = new Map<string, Window>();

  /** 0 when the request may pass, else the seconds until the window resets (for Retry-After). */
  take(key: string, requests: number, perSeconds: number, now = Date.now()): number {
    const length = perSeconds * 1000;
    let window = this.#windows.get(key);
    if (!window || now - window.start >= length) {
      if (this.#windows.size > 100_000) this.#windows.clear();
      window = { start: now, count: 0 };
      this.#windows.set(key, window);
    }
    if (window.count >= requests) return Math.max(1, Math.ceil((window.start + length - now) / 1000));
    window.count++;
    return 0;
  }
}
