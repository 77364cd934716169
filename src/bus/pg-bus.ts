/**
 * The bus across processes (SPEC 10, distributed mode): PostgreSQL LISTEN/NOTIFY on one channel.
 *
 * `publish()` first delivers to this process's own subscribers and awaits them, exactly like
 * LocalBus (so "save, then call the URL" on the same process needs no round trip), then sends the
 * notice to the other processes with `pg_notify`. One dedicated connection per process LISTENs
 * and sends; notices from other processes are re-published locally, one at a time in arrival
 * order (two reloads of one workflow must not overtake each other).
 *
 * Batching: notices published in one turn of the event loop go out in one NOTIFY, and those
 * published while a NOTIFY is in flight go out together in the next one (identical ones once),
 * like the group commit of ingest. The connection does not wait for its NOTIFYs' WAL flush
 * (synchronous_commit off for this session only: see `#open`). Under load that is one round trip for
 * a worker finishing 8 executions, and one `execution.queued` however many batches ingest
 * committed meanwhile. A NOTIFY payload is limited to 8000 bytes: a batch is split into payloads
 * under 7 900 bytes (a notice is ~100 bytes), all sent by one statement.
 *
 * Losing the connection: it is re-opened with exponential backoff (100 ms doubling to 5 s).
 * Notices published meanwhile wait in the outbox and go out after the reconnect; notices other
 * processes sent meanwhile are lost to us, so after every reconnect subscribers get a local
 * `bus.resynced` and re-read their state from the store. A ping every 10 s finds a connection
 * that died without a reset, which TCP keepalive alone would take minutes to notice.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { type Bus, type BusChannel, type BusEvents, LocalBus } from './bus.js';

/** The PostgreSQL channel; hookflow's own channel name travels inside the payload. */
export const PG_CHANNEL = 'hookflow';
/** Shown in pg_stat_activity.application_name. */
export const PG_BUS_APPLICATION = 'hookflow-bus';
/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more (default build). */
const MAX_PAYLOAD_BYTES = 7_900;
/** Notices kept while disconnected; past this the oldest are dropped (the resync covers them). */
const MAX_OUTBOX = 10_000;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;
const PING_MS = 10_000;
const PING_TIMEOUT_MS = 5_000;
const CONNECT_TIMEOUT_MS = 5_000;

type Handler<C extends BusChannel> = (payload: BusEvents[C]) => void | Promise<void>;

/** What one NOTIFY carries: the sender and its notices, each `[channel, payload]`. */
interface Envelope {
  o: string;
  m: [BusChannel, unknown][];
}

interface Flight {
  client: pg.Client;
  /** Serialised notices → resolvers of the publish() calls waiting for them. */
  batch: Map<string, (() => void)[]>;
}

export interface PgBusOptions {
  url: string;
  log: Logger;
}

export class PgBus implements Bus {
  readonly #local = new LocalBus();
  /** Tells this process's notices apart when they come back on its own LISTEN. */
  readonly #origin = randomUUID();
  readonly #url: string;
  readonly #log: Logger;
  #client: pg.Client | undefined;
  #outbox = new Map<string, (() => void)[]>();
  #flight: Flight | undefined;
  #inbound: Promise<void> = Promise.resolve();
  #failures = 0;
  #flushScheduled = false;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #pingTimer: NodeJS.Timeout | undefined;
  #closed = false;

  private constructor({ url, log }: PgBusOptions) {
    this.#url = url;
    this.#log = log.child({ component: 'bus' });
  }

  /** Connect and LISTEN before anything subscribes, so no notice falls between load and listen. */
  static async connect(options: PgBusOptions): Promise<PgBus> {
    const bus = new PgBus(options);
    bus.#client = await bus.#open();
    bus.#pingTimer = setInterval(() => bus.#ping(), PING_MS);
    bus.#pingTimer.unref();
    return bus;
  }

  /** Whether the LISTEN connection is up (for readiness and tests). */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  async publish<C extends BusChannel>(channel: C, payload: BusEvents[C]): Promise<void> {
    await this.#local.publish(channel, payload);
    if (this.#closed || channel === 'bus.resynced') return;
    const key = JSON.stringify([channel, payload]);
    // Disconnected: the notice waits in the outbox and the caller goes on; the others resync.
    if (!this.#client) {
      this.#enqueue(key, undefined);
      return;
    }
    await new Promise<void>((resolve) => {
      this.#enqueue(key, resolve);
      this.#scheduleFlush();
    });
  }

  publishHere<C extends BusChannel>(channel: C, payload: BusEvents[C]): Promise<void> {
    return this.#local.publish(channel, payload);
  }

  subscribe<C extends BusChannel>(channel: C, handler: Handler<C>): () => void {
    return this.#local.subscribe(channel, handler);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // Send what is queued while the connection is still there (bounded: close has a deadline).
    if (this.#client && (this.#flight || this.#outbox.size > 0)) {
      await Promise.race([this.#drained(), new Promise((r) => setTimeout(r, 1_000).unref())]);
    }
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    clearInterval(this.#pingTimer);
    const client = this.#client;
    this.#client = undefined;
    for (const waiters of this.#outbox.values()) for (const w of waiters) w();
    this.#outbox.clear();
    if (client) {
      // A goodbye over a dead connection would wait for the kernel; give it a second, then cut.
      await Promise.race([
        client.end().catch(() => undefined),
        new Promise((r) => setTimeout(r, 1_000).unref()),
      ]);
      client.connection.stream.destroy();
    }
    await this.#local.close();
  }

  #drained(): Promise<void> {
    return new Promise((resolve) => {
      const check = () =>
        this.#closed || (!this.#flight && this.#outbox.size === 0) ? resolve() : setTimeout(check, 5);
      check();
    });
  }

  #enqueue(key: string, resolve: (() => void) | undefined): void {
    const waiters = this.#outbox.get(key);
    if (waiters) {
      if (resolve) waiters.push(resolve);
      return;
    }
    if (this.#outbox.size >= MAX_OUTBOX) {
      const [oldest, dropped] = this.#outbox.entries().next().value as [string, (() => void)[]];
      this.#outbox.delete(oldest);
      for (const w of dropped) w();
      this.#log.warn({ limit: MAX_OUTBOX }, 'bus outbox full while disconnected; dropping the oldest notice');
    }
    this.#outbox.set(key, resolve ? [resolve] : []);
  }

  /**
   * Send at the end of this turn of the event loop, not at once: a worker that records eight
   * results in one group commit publishes eight notices in one turn, and they go in one NOTIFY
   * (every NOTIFY is a transaction, delivered to every process that listens).
   */
  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      this.#flush();
    });
  }

  /** Send everything in the outbox in one statement, unless a send is in flight (then it follows). */
  #flush(): void {
    const client = this.#client;
    if (this.#flight || !client || this.#outbox.size === 0) return;
    const flight: Flight = { client, batch: this.#outbox };
    this.#outbox = new Map();
    this.#flight = flight;
    const payloads = envelopes(this.#origin, [...flight.batch.keys()], this.#log);
    client.query('select pg_notify($1, p) from unnest($2::text[]) as p', [PG_CHANNEL, payloads]).then(
      () => this.#landed(flight, undefined),
      (err: unknown) => this.#landed(flight, err),
    );
  }

  #landed(flight: Flight, err: unknown): void {
    // A flight taken back by #lost was already put back in the outbox.
    if (this.#flight !== flight) return;
    this.#flight = undefined;
    if (err !== undefined) {
      if (isConnectionError(err)) {
        this.#requeue(flight);
        // Usually the client's error event came first; if not, drop the connection now.
        this.#lost(flight.client, err);
      } else {
        this.#log.error({ err, notices: flight.batch.size }, 'sending bus notices failed; dropping them');
      }
    }
    for (const waiters of flight.batch.values()) for (const w of waiters) w();
    this.#flush();
  }

  /** Put a batch whose send failed back in front of the outbox, to go out after the reconnect. */
  #requeue(flight: Flight): void {
    const outbox = new Map<string, (() => void)[]>();
    for (const key of flight.batch.keys()) outbox.set(key, []);
    for (const [key, waiters] of this.#outbox) outbox.set(key, [...(outbox.get(key) ?? []), ...waiters]);
    this.#outbox = outbox;
  }

  #onNotification = (msg: pg.Notification): void => {
    if (msg.channel !== PG_CHANNEL || !msg.payload) return;
    let envelope: Envelope;
    try {
      envelope = JSON.parse(msg.payload) as Envelope;
    } catch (err) {
      this.#log.warn({ err }, 'ignoring a malformed bus notice');
      return;
    }
    if (envelope.o === this.#origin || !Array.isArray(envelope.m)) return;
    this.#inbound = this.#inbound.then(() => this.#deliver(envelope.m));
  };

  async #deliver(messages: [BusChannel, unknown][]): Promise<void> {
    for (const [channel, payload] of messages) {
      // Channels this version does not know have no subscribers (a rolling upgrade mixes versions).
      await this.#local
        .publish(channel, payload as never)
        .catch((err) => this.#log.error({ err, channel }, 'handling a notice from another process failed'));
    }
  }

  async #open(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.#url,
      application_name: PG_BUS_APPLICATION,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    client.on('notification', this.#onNotification);
    client.on('error', (err) => this.#lost(client, err));
    client.on('end', () => this.#lost(client, undefined));
    try {
      await client.connect();
      // A NOTIFY commits a transaction of its own, which at the default synchronous_commit waits
      // for a WAL flush (an fsync) like a write. Notices are not durable anyway (a process that
      // reconnects resyncs from the store), so this session does not wait: the notice is sent at
      // commit, and the flush is left to the WAL writer.
      await client.query(`set synchronous_commit = off; listen ${PG_CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    return client;
  }

  /** The connection broke (error, end, or no answer to a ping): drop it and reconnect. */
  #lost(client: pg.Client, err: unknown): void {
    if (client !== this.#client) return;
    this.#client = undefined;
    if (this.#flight?.client === client) {
      const flight = this.#flight;
      this.#flight = undefined;
      this.#requeue(flight);
      for (const waiters of flight.batch.values()) for (const w of waiters) w();
    }
    // Cut rather than end(): a goodbye over a dead connection waits for the kernel to give up.
    client.connection.stream.destroy();
    if (this.#closed) return;
    this.#log.warn({ err }, 'bus connection lost; reconnecting');
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** this.#failures);
    this.#failures++;
    // Jitter spreads the reconnects of many processes after a database restart.
    this.#reconnectTimer = setTimeout(() => void this.#reconnect(), delay * (0.75 + Math.random() / 2));
    this.#reconnectTimer.unref();
  }

  async #reconnect(): Promise<void> {
    if (this.#closed) return;
    let client: pg.Client;
    try {
      client = await this.#open();
    } catch (err) {
      this.#log.warn({ err, failures: this.#failures }, 'bus reconnect failed; retrying');
      this.#scheduleReconnect();
      return;
    }
    if (this.#closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
    this.#failures = 0;
    this.#log.info('bus reconnected; resyncing state from the store');
    this.#inbound = this.#inbound.then(() =>
      this.#local
        .publish('bus.resynced', {})
        .catch((err) => this.#log.error({ err }, 'resyncing after a bus reconnect failed')),
    );
    this.#flush();
  }

  #ping(): void {
    const client = this.#client;
    if (!client) return;
    const timer = setTimeout(
      () => this.#lost(client, new Error('bus connection did not answer a ping')),
      PING_TIMEOUT_MS,
    );
    // A failed ping needs no handling here: the connection's error/end events report it.
    client.query('select 1').then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
  }
}

/** Wrap serialised notices into as few NOTIFY payloads as fit under the size limit. */
function envelopes(origin: string, notices: string[], log: Logger): string[] {
  const head = `{"o":${JSON.stringify(origin)},"m":[`;
  const out: string[] = [];
  let current: string[] = [];
  let size = head.length + 2;
  for (const notice of notices) {
    const bytes = Buffer.byteLength(notice) + 1;
    if (head.length + 2 + bytes > MAX_PAYLOAD_BYTES) {
      log.error({ bytes }, 'bus notice too large for NOTIFY; dropping it');
      continue;
    }
    if (size + bytes > MAX_PAYLOAD_BYTES) {
      out.push(`${head}${current.join(',')}]}`);
      current = [];
      size = head.length + 2;
    }
    current.push(notice);
    size += bytes;
  }
  if (current.length > 0) out.push(`${head}${current.join(',')}]}`);
  return out;
}

/**
 * Errors that mean the connection is gone (the send is retried after the reconnect): anything but
 * an error answer from the server (socket errors), or one of class 08 (connection exception) or
 * 57 (operator intervention: pg_terminate_backend, a server shutdown). Others are the statement's.
 */
function isConnectionError(err: unknown): boolean {
  if (!(err instanceof pg.DatabaseError)) return true;
  const code = err.code ?? '';
  return code.startsWith('08') || code.startsWith('57');
}
