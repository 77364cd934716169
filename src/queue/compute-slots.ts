/**
 * The compute slots of the engine thread (SPEC 7d): HOOKFLOW_EXECUTOR_CONCURRENCY executions
 * compute at once; the others in flight (up to HOOKFLOW_EXECUTOR_MAX_IN_FLIGHT, the worker's cap)
 * wait on the outside world or for a slot. An execution takes a slot before its first step and
 * gives it up whenever a step answers with a promise (engine/run.ts: an `http` call, and so any
 * step type that waits on something outside the thread, without knowing of slots; not a
 * contained one, the `code` step, which computes on its sandbox thread meanwhile), and takes one
 * again before the run goes on. A run that comes back from a wait is served before new ones
 * start: finishing what started keeps fewer executions (and their memory) in flight.
 *
 * Before this, an execution held its slot for its whole run: a `webhook → http (100 ms) → set`
 * workflow drained 72 executions a second with 8 slots, each idle for the whole call.
 */
import type { ComputeSlot } from '../engine/types.js';
import type { MaybePromise } from '../shared/maybe-promise.js';

export class ComputeSlots {
  readonly #size: number;
  #taken = 0;
  /** Runs back from a wait, then runs not yet started: each resolves when given a slot. */
  readonly #returning: (() => void)[] = [];
  readonly #starting: (() => void)[] = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`compute slots: ${size} is not a count`);
    this.#size = size;
  }

  /** Slots held now. */
  get taken(): number {
    return this.#taken;
  }

  /** Runs waiting for a slot now. */
  get queued(): number {
    return this.#returning.length + this.#starting.length;
  }

  /** One run's slot, not held yet. */
  slot(): ComputeSlot {
    let held = false;
    let started = false;
    return {
      acquire: (): MaybePromise<void> => {
        if (held) return;
        const first = !started;
        started = true;
        if (this.#taken < this.#size) {
          this.#taken++;
          held = true;
          return;
        }
        return new Promise<void>((resolve) => {
          (first ? this.#starting : this.#returning).push(() => {
            held = true;
            resolve();
          });
        });
      },
      release: (): void => {
        if (!held) return;
        held = false;
        const next = this.#returning.shift() ?? this.#starting.shift();
        // The slot passes straight to the next run: `taken` stays.
        if (next) next();
        else this.#taken--;
      },
    };
  }
}
