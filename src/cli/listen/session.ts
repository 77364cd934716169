/**
 * `hookflow listen`'s session: subscribe to the test-event stream, open the listener, count down,
 * print (and forward) captures one at a time, reconnect a dropped stream, close the listener on exit.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createParser } from 'eventsource-parser';
import { ApiError, apiError, CliError, describe } from '../api.js';
import { type CaptureEvent, clock, formatCapture, plural } from './format.js';
import { forward } from './forward.js';

export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

interface ListenerInfo {
  listenerId: string;
  expiresAt: string;
  testUrl: string;
}

// Non-TTY stderr (CI logs, pipes) gets a plain "… left" line this often instead of a live countdown.
const PLAIN_COUNTDOWN_EVERY_MS = 30_000;
// Until the server says otherwise with `retry:`, wait this long before reconnecting a dropped stream.
const DEFAULT_RECONNECT_MS = 3_000;

export interface SessionOptions {
  workflowId: string;
  baseUrl: string;
  token: string;
  timeoutSeconds: number;
  keepListening: boolean;
  forwardTo: URL | undefined;
}

type Outcome =
  | { kind: 'done' }
  | { kind: 'interrupted' }
  | { kind: 'deadline' }
  | { kind: 'failed'; error: unknown };

export class Session {
  readonly #o: SessionOptions;
  readonly #stdout: Output;
  readonly #stderr: Output;
  readonly #signals: Pick<NodeJS.Process, 'once' | 'off'>;
  readonly #abort = new AbortController();
  readonly #seen = new Set<string>();
  #listener: ListenerInfo | undefined;
  #deadline = 0;
  #captured = 0;
  /** Captures are printed and forwarded one at a time, in arrival order. */
  #queue: Promise<void> = Promise.resolve();
  #pending: CaptureEvent[] = [];
  /** The POST that opens the listener was sent: Ctrl-C must close it. */
  #opening = false;
  #finish: (outcome: Outcome) => void = () => {};
  #statusShown = false;
  #reconnectMs = DEFAULT_RECONNECT_MS;

  constructor(
    options: SessionOptions,
    io: { stdout: Output; stderr: Output; signals: Pick<NodeJS.Process, 'once' | 'off'> },
  ) {
    this.#o = options;
    this.#stdout = io.stdout;
    this.#stderr = io.stderr;
    this.#signals = io.signals;
  }

  async run(): Promise<number> {
    const finished = new Promise<Outcome>((resolve) => {
      this.#finish = resolve;
    });
    let interrupts = 0;
    const onSigint = () => {
      // A second Ctrl-C while the listener is being closed means "now".
      if (++interrupts > 1) process.exit(130);
      // Before the listener is open there is nothing to wait for: cancel the requests in flight.
      if (!this.#listener) this.#abort.abort();
      this.#finish({ kind: 'interrupted' });
    };
    this.#signals.once('SIGINT', onSigint);
    const timers: NodeJS.Timeout[] = [];
    try {
      const started = this.#start().then(
        () => undefined,
        (error: unknown): Outcome => ({ kind: 'failed', error }),
      );
      const early = await Promise.race([started, finished]);
      if (early === undefined) {
        timers.push(setTimeout(() => this.#finish({ kind: 'deadline' }), this.#deadline - Date.now()));
        timers.push(this.#startCountdown());
        for (const event of this.#pending.splice(0)) this.#enqueue(event);
      } else {
        // Interrupted or failed while starting: let the aborted requests settle before cleaning up.
        await started;
      }
      const outcome = early ?? (await finished);
      this.#clearStatus();
      switch (outcome.kind) {
        case 'done':
          return 0;
        case 'interrupted':
          if (this.#opening) await this.#closeListener();
          this.#err('Stopped listening.\n');
          return 0;
        case 'deadline': {
          const window = clock(this.#o.timeoutSeconds * 1000);
          if (this.#captured === 0) {
            this.#err(`No request arrived within ${window}; the listener has expired.\n`);
            return 1;
          }
          this.#err(
            `The listener expired after ${window} (${plural(this.#captured, 'request')} captured).\n`,
          );
          return 0;
        }
        case 'failed':
          if (this.#listener) await this.#closeListener();
          throw outcome.error;
        default:
          return outcome satisfies never;
      }
    } finally {
      for (const t of timers) clearTimeout(t);
      this.#signals.off('SIGINT', onSigint);
      this.#abort.abort();
    }
  }

  /** Subscribe, wait for the stream's first event, then open the listener and show its URL. */
  async #start(): Promise<void> {
    const startedAt = Date.now();
    let onListening: () => void = () => {};
    const listening = new Promise<void>((resolve) => {
      onListening = resolve;
    });
    // Errors of this first connection are fatal (bad token, unknown workflow, server down).
    const body = await this.#connect();
    void this.#consume(body, onListening);
    await listening;
    this.#opening = true;
    const listener = await this.#api<ListenerInfo>('POST', '/test-listener', {
      timeoutSeconds: this.#o.timeoutSeconds,
      keepListening: this.#o.keepListening,
    });
    // The local clock from before the request: never later than the server's expiry, whatever the clock skew.
    this.#deadline = startedAt + this.#o.timeoutSeconds * 1000;
    this.#listener = listener;
    this.#out(`Test URL: ${listener.testUrl}\n`);
    const what = this.#o.keepListening ? 'requests' : 'one request';
    const forward = this.#o.forwardTo ? `, forwarding to ${this.#o.forwardTo.href}` : '';
    this.#err(`Listening for ${what} to workflow ${this.#o.workflowId}${forward} (Ctrl-C to stop).\n`);
  }

  // -- the SSE stream --------------------------------------------------------------------------------

  async #connect(): Promise<ReadableStream<Uint8Array>> {
    const res = await this.#fetch(`${this.#workflowUrl()}/test-events/stream`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${this.#o.token}` },
      signal: this.#abort.signal,
    });
    if (!res.ok || !res.body) throw await apiError(res);
    return res.body;
  }

  /** Reads the stream until the session ends; reconnects (and catches up) when it drops. */
  async #consume(first: ReadableStream<Uint8Array>, onListening: () => void): Promise<void> {
    let body: ReadableStream<Uint8Array> | undefined = first;
    let reconnecting = false;
    const parser = createParser({
      onEvent: (message) => {
        if (message.event === 'listening') onListening();
        if (message.event !== 'capture') return;
        try {
          this.#onCapture(JSON.parse(message.data) as CaptureEvent);
        } catch (err) {
          this.#finish({ kind: 'failed', error: err });
        }
      },
      onRetry: (ms) => {
        this.#reconnectMs = ms;
      },
    });
    while (!this.#abort.signal.aborted) {
      let reason = 'the server closed the stream';
      try {
        body ??= await this.#connect();
        if (reconnecting) {
          reconnecting = false;
          this.#err('Reconnected.\n');
          await this.#catchUp();
        }
        const reader = body.getReader();
        const decoder = new TextDecoder();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parser.feed(decoder.decode(value, { stream: true }));
        }
      } catch (err) {
        if (this.#abort.signal.aborted) return;
        // A revoked token or a deleted workflow will not come back by retrying.
        if (err instanceof ApiError && [401, 403, 404].includes(err.status)) {
          this.#finish({ kind: 'failed', error: err });
          return;
        }
        reason = describe(err);
      }
      body = undefined;
      parser.reset();
      if (this.#abort.signal.aborted) return;
      if (!this.#listener) {
        const error = new CliError(`The event stream ended before listening started: ${reason}.`, 1);
        this.#finish({ kind: 'failed', error });
        return;
      }
      if (!reconnecting) {
        reconnecting = true;
        this.#err(`Lost the connection to hookflow (${reason}); reconnecting…\n`);
      }
      // Until the deadline ends the session; the listener is a stored row and outlives a server restart.
      // Cut short when the session ends: the abort rejects, and the loop's next check returns.
      await sleep(this.#reconnectMs, undefined, { signal: this.#abort.signal }).catch(() => undefined);
    }
  }

  /** Captures that happened while the stream was down, from the list endpoint (newest first). */
  async #catchUp(): Promise<void> {
    const page = await this.#api<{ items: CaptureEvent[] }>('GET', '/test-events?limit=100');
    for (const event of page.items.reverse()) this.#onCapture(event);
  }

  #onCapture(event: CaptureEvent): void {
    if (!this.#listener) {
      // Arrived between subscribing and our POST: kept until we know our listener's id.
      this.#pending.push(event);
      return;
    }
    this.#enqueue(event);
  }

  #enqueue(event: CaptureEvent): void {
    // Listener and event ids are UUIDv7 (time-ordered), so an event newer than our listener is ours;
    // older ones belong to an earlier listener of the same workflow (e.g. one opened in the UI).
    if (event.id <= this.#listener!.listenerId || this.#seen.has(event.id)) return;
    if (!this.#o.keepListening && this.#seen.size > 0) return;
    this.#seen.add(event.id);
    this.#queue = this.#queue
      .then(() => this.#handle(event))
      .then(
        () => {
          if (!this.#o.keepListening) this.#finish({ kind: 'done' });
        },
        (error: unknown) => this.#finish({ kind: 'failed', error }),
      );
  }

  async #handle(event: CaptureEvent): Promise<void> {
    this.#captured++;
    this.#out(formatCapture(event));
    if (this.#o.forwardTo) this.#out(`${await forward(this.#o.forwardTo, event.item)}\n`);
    this.#drawStatus();
  }

  // -- the listener ----------------------------------------------------------------------------------

  async #closeListener(): Promise<void> {
    try {
      await this.#api('DELETE', '/test-listener', undefined, AbortSignal.timeout(5_000));
    } catch (err) {
      this.#err(
        `Could not close the listener (${describe(err)}); it expires by itself at ${this.#listener?.expiresAt}.\n`,
      );
    }
  }

  async #api<T>(
    method: string,
    route: string,
    body?: unknown,
    signal: AbortSignal = this.#abort.signal,
  ): Promise<T> {
    const res = await this.#fetch(`${this.#workflowUrl()}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${this.#o.token}`,
        accept: 'application/json',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    if (!res.ok) throw await apiError(res);
    return (res.status === 204 ? undefined : await res.json()) as T;
  }

  async #fetch(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, init);
    } catch (err) {
      if (init.signal?.aborted) throw err;
      throw new CliError(
        `Could not reach hookflow at ${this.#o.baseUrl}: ${describe(err)}.`,
        1,
        'Is the server running (`hookflow start`)? Point --url or HOOKFLOW_URL at it.',
      );
    }
  }

  #workflowUrl(): string {
    return `${this.#o.baseUrl}/api/v1/workflows/${encodeURIComponent(this.#o.workflowId)}`;
  }

  // -- output ----------------------------------------------------------------------------------------

  #startCountdown(): NodeJS.Timeout {
    if (this.#stderr.isTTY) {
      this.#drawStatus();
      return setInterval(() => this.#drawStatus(), 1_000);
    }
    this.#err(`listening… ${this.#left()} left\n`);
    return setInterval(() => this.#err(`listening… ${this.#left()} left\n`), PLAIN_COUNTDOWN_EVERY_MS);
  }

  #left(): string {
    return clock(Math.max(0, this.#deadline - Date.now()));
  }

  /** The live countdown line (TTY only); every other output clears it first and redraws it after. */
  #drawStatus(): void {
    if (!this.#stderr.isTTY || this.#deadline === 0) return;
    const count = this.#o.keepListening ? ` · ${plural(this.#captured, 'request')}` : '';
    this.#stderr.write(`\r\x1b[2Klistening… ${this.#left()} left${count}`);
    this.#statusShown = true;
  }

  #clearStatus(): void {
    if (!this.#statusShown) return;
    this.#stderr.write('\r\x1b[2K');
    this.#statusShown = false;
  }

  #out(text: string): void {
    this.#clearStatus();
    this.#stdout.write(text);
  }

  #err(text: string): void {
    this.#clearStatus();
    this.#stderr.write(text);
  }
}
