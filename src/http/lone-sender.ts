/**
 * Whether webhook requests come from one sender, one at a time. The webhook front tells it each
 * request's connection and passes its answer down as `commitNow` (Receiver → Ingest.commit →
 * GroupCommit.hot): a hot write is then committed on the event loop at once (store.writeHotNow)
 * instead of being handed to the SQLite writer thread and back. Only the HTTP layer sees
 * connections, so the decision is its own.
 *
 * Why: from one sender, the event loop has nothing else to do while a commit syncs, and the two
 * hand-overs between threads (a wake-up each way, the batch's structured clone, the promises
 * around them) cost that sender ~80 µs of its ~0.5 ms (one sender, alternated with the build
 * without it: p50 41 µs above the durable floor's before, 37 µs below it after). From several
 * senders, a commit on the event loop keeps every other request waiting unread for its fsync: done
 * whenever the writer was idle, 4 and 8 connections lost 14 % of their throughput. Those come in
 * turn on different connections, so a run of requests on one connection is the sign (2, 4, 8 and
 * 50 connections: 0.96×, 0.96×, 1.03×, 1.05× of the build without it, within the noise).
 */

/** Requests in a row on one connection after which it counts as the only sender. */
export const LONE_STREAK = 8;

export class LoneSender {
  #connection: object | undefined;
  #streak = 0;

  /** A webhook request arrived on `connection` (its socket). */
  saw(connection: object): void {
    if (connection === this.#connection) this.#streak++;
    else {
      this.#connection = connection;
      this.#streak = 0;
    }
  }

  /** Whether the last LONE_STREAK requests, and more, all came on one connection. */
  get now(): boolean {
    return this.#streak >= LONE_STREAK;
  }
}
