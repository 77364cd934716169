/**
 * Time as the scheduler sees it: the process's one injected clock (src/shared/clock.ts), so tests
 * drive schedules, leases and waits with one fake clock (test/helpers/fake-clock.ts). The scheduler
 * uses `now` and the one-shot `setTimer`.
 */
export { type Clock, systemClock } from '../shared/clock.js';
