/**
 * `hookflow listen <workflowId>`: a developer's terminal view of test listening (SPEC 8, 9). It talks
 * to a running hookflow over its public API only, so it works against any server it has a token for:
 *
 *   1. subscribe to GET /workflows/:id/test-events/stream (SSE) and wait for its `listening` event,
 *   2. open the listener with POST /workflows/:id/test-listener,
 *   3. print each `capture` event; with --forward-to, re-send it to the developer's own receiver.
 *
 * The stream is opened before the listener so that a request arriving right after the URL is shown
 * cannot slip past unseen. A dropped stream (server restart) is reconnected and the gap is filled from
 * GET /workflows/:id/test-events; the listener itself is a stored row and survives the restart.
 *
 * Exit codes: 0 after the first capture (or on Ctrl-C, or when a --keep-listening listener expires
 * after at least one capture); 1 when the deadline passes with no request, or on an API/network error;
 * 2 on bad usage or a missing token.
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import { createParser } from 'eventsource-parser';
import { XMLBuilder } from 'fast-xml-parser';
import { type Dispatcher, request } from 'undici';
import { DEFAULT_LISTEN_SECONDS, MAX_LISTEN_SECONDS } from '../webhooks/test-listener.js';
import { ApiError, apiError, baseUrlFrom, CliError, describe, tokenFrom } from './api.js';

export interface ListenDeps {
  /** Where HOOKFLOW_URL, HOOKFLOW_PORT and HOOKFLOW_TOKEN are read from (process.env in the CLI). */
  env: Record<string, string | undefined>;
  /** Prints `hookflow listen --help` (to stderr when asError) and returns the exit code. */
  showHelp(asError: boolean): number;
  stdout?: Output;
  stderr?: Output;
  /** Where Ctrl-C comes from; process by default. */
  signals?: Pick<NodeJS.Process, 'once' | 'off'>;
}

interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** The trigger item as stored with a test event (src/webhooks/receive.ts TriggerItem), as far as we read it. */
export interface CapturedItem {
  method: string;
  path: string;
  query?: Record<string, unknown>;
  headers?: Record<string, string | string[]>;
  body?: unknown;
  files?: { field: string; filename: string; mimeType: string; size: number }[];
  webhookUrl?: string;
  receivedAt?: string;
}

interface CaptureEvent {
  id: string;
  executionId: string | null;
  receivedAt: string;
  item: CapturedItem;
}

interface ListenerInfo {
  listenerId: string;
  expiresAt: string;
  testUrl: string;
}

// A local receiver that never answers must not stall the captures queued behind it.
const FORWARD_TIMEOUT_MS = 30_000;
// A non-2xx answer from the receiver is shown, cut to this many characters.
const RESPONSE_PREVIEW_CHARS = 1_000;
// Non-TTY stderr (CI logs, pipes) gets a plain "… left" line this often instead of a live countdown.
const PLAIN_COUNTDOWN_EVERY_MS = 30_000;
// Until the server says otherwise with `retry:`, wait this long before reconnecting a dropped stream.
const DEFAULT_RECONNECT_MS = 3_000;

export async function listen(args: string[], deps: ListenDeps): Promise<number> {
  const stdout = deps.stdout ?? process.stdout;
  const stderr = deps.stderr ?? process.stderr;
  const { values, positionals } = parseArgs({
    args,
    options: {
      'forward-to': { type: 'string' },
      timeout: { type: 'string' },
      'keep-listening': { type: 'boolean' },
      url: { type: 'string' },
      token: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) return deps.showHelp(false);
  const [workflowId, ...extra] = positionals;
  if (workflowId === undefined) return deps.showHelp(true);
  try {
    if (extra.length > 0) {
      throw new CliError(`Unexpected argument "${extra[0]}". Run \`hookflow listen --help\`.`, 2);
    }
    const options = {
      workflowId,
      baseUrl: baseUrlFrom(values.url, deps.env),
      token: tokenFrom(values.token, deps.env),
      timeoutSeconds: timeoutFrom(values.timeout),
      keepListening: values['keep-listening'] === true,
      forwardTo: values['forward-to'] === undefined ? undefined : forwardUrlFrom(values['forward-to']),
    };
    return await new Session(options, { stdout, stderr, signals: deps.signals ?? process }).run();
  } catch (err) {
    if (err instanceof CliError) {
      stderr.write(`hookflow: ${err.message}\n${err.hint ? `${err.hint}\n` : ''}`);
      return err.exitCode;
    }
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------
// Options

function timeoutFrom(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LISTEN_SECONDS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_LISTEN_SECONDS) {
    throw new CliError(
      `--timeout ${JSON.stringify(raw)} is invalid: expected whole seconds from 1 to ${MAX_LISTEN_SECONDS}.`,
      2,
    );
  }
  return n;
}

function forwardUrlFrom(raw: string): URL {
  try {
    const url = new URL(raw);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {
    // reported below, with the same message as a non-http URL
  }
  throw new CliError(
    `--forward-to ${JSON.stringify(raw)} is not an http:// or https:// URL.`,
    2,
    'Point it at your own receiver, e.g. --forward-to http://localhost:3000/hooks/stripe.',
  );
}

// ---------------------------------------------------------------------------------------------------
// The session: stream, listener, countdown, captures, forwarding, shutdown

interface SessionOptions {
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

class Session {
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
      await sleep(this.#reconnectMs, this.#abort.signal);
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

// ---------------------------------------------------------------------------------------------------
// API errors

// ---------------------------------------------------------------------------------------------------
// Printing a capture

export function formatCapture(event: CaptureEvent): string {
  const { item } = event;
  const at = new Date(event.receivedAt || item.receivedAt || Date.now());
  const time = Number.isNaN(at.getTime()) ? '' : at.toTimeString().slice(0, 8);
  const contentType = headerValue(item.headers, 'content-type');
  const execution = event.executionId ? `  (execution ${oneLine(event.executionId)})` : '';
  const lines = [`\n[${time}] ${oneLine(item.method)} ${oneLine(pathOf(item))}${execution}`];
  if (contentType) lines.push(`content-type: ${oneLine(contentType)}`);
  if (item.query && Object.keys(item.query).length > 0) lines.push(`query: ${pretty(item.query)}`);
  if (!isEmptyObject(item.body))
    lines.push(`body: ${typeof item.body === 'string' ? text(item.body) : pretty(item.body)}`);
  for (const f of item.files ?? [])
    lines.push(
      `file: ${oneLine(f.field)} → ${oneLine(f.filename)} (${oneLine(f.mimeType)}, ${Number(f.size)} bytes)`,
    );
  return `${lines.join('\n')}\n`;
}

/*
 * Whatever a capture holds comes from anyone who can reach the test URL. Printed raw, ESC (C0) or
 * CSI (C1, U+009B) sequences in it would drive the developer's terminal: colours, cursor moves,
 * erasing lines, window titles, on some terminals clipboard writes (OSC 52). So control characters
 * in captured data are printed escaped, C0 and DEL as \x1b, C1 as \u009b. JSON.stringify escapes C0
 * already but leaves DEL and C1 as they are.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above, with tab and newline too
const CONTROL_IN_LINE = /[\u0000-\u001f\u007f-\u009f]/g;

const escapeControl = (c: string): string => {
  const code = c.charCodeAt(0);
  return code >= 0x80
    ? `\\u${code.toString(16).padStart(4, '0')}`
    : `\\x${code.toString(16).padStart(2, '0')}`;
};

/** A captured text printed as text: its newlines and tabs kept, every other control escaped. */
const text = (value: string): string => value.replace(CONTROL_IN_TEXT, escapeControl);

/** A captured value printed inside one line (method, path, header, file name): newlines escaped too. */
const oneLine = (value: unknown): string => String(value).replace(CONTROL_IN_LINE, escapeControl);

function pathOf(item: CapturedItem): string {
  if (item.webhookUrl) {
    try {
      return new URL(item.webhookUrl).pathname;
    } catch {
      // not a URL: fall back to the bare path
    }
  }
  return `/${item.path}`;
}

// The layout's newlines are JSON's own; those inside strings are escaped by JSON.stringify.
const pretty = (value: unknown): string => text(JSON.stringify(value, null, 2) ?? String(value));

// ---------------------------------------------------------------------------------------------------
// Forwarding

// Per-hop headers (RFC 9110 7.6.1) and the ones fetch computes itself; content-encoding goes because
// the stored body is already decoded, and expect because fetch refuses it.
const DROPPED_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'content-encoding',
  'expect',
]);

export interface ForwardPlan {
  url: URL;
  method: string;
  /** Lower-case names; repeated headers as arrays. */
  headers: Record<string, string | string[]>;
  body: string | FormData | undefined;
  notes: string[];
}

// RFC 9110 field-name token; a value may not hold CR, LF or NUL.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_HEADER_VALUE = /[\r\n\0]/;

/**
 * The request to re-send for a captured item. The store keeps the parsed item, not the raw bytes, so
 * the body is re-encoded from it: JSON → JSON, form → URL-encoded (nested keys as qs writes them),
 * multipart → multipart fields, XML → XML, text → as is. Files (multipart files, binary bodies) are
 * not in the item and are left out with a note. Signatures over the original bytes will not verify.
 * The captured query string is appended to the target URL's own.
 */
export function planForward(target: URL, item: CapturedItem): ForwardPlan {
  const notes: string[] = [];
  const url = new URL(target);
  for (const [key, value] of flatten(item.query ?? {})) url.searchParams.append(key, value);

  const headers: Record<string, string | string[]> = {};
  const connectionTokens = (headerValue(item.headers, 'connection') ?? '')
    .toLowerCase()
    .split(',')
    .map((s) => s.trim());
  const masked: string[] = [];
  for (const [name, value] of Object.entries(item.headers ?? {})) {
    const lower = name.toLowerCase();
    if (DROPPED_HEADERS.has(lower) || connectionTokens.includes(lower)) continue;
    const values = Array.isArray(value) ? value : [value];
    if (!HEADER_NAME.test(name) || values.some((v) => BAD_HEADER_VALUE.test(v))) {
      notes.push(`header ${JSON.stringify(name)} left out: not valid in a request`);
      continue;
    }
    if (values.includes('***')) masked.push(lower);
    headers[lower] = values.length === 1 ? values[0]! : values;
  }
  if (masked.length > 0) notes.push(`${masked.join(', ')} masked by hookflow, sent as ***`);

  const method = item.method.toUpperCase();
  const files = item.files ?? [];
  const contentType = headerValue(item.headers, 'content-type') ?? '';
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const bodyless =
    method === 'GET' || method === 'HEAD' || headerValue(item.headers, 'content-length') === '0';
  let body: ForwardPlan['body'];

  if (!bodyless) {
    const raw = files.find((f) => f.field === 'body');
    if (type === 'multipart/form-data') {
      const form = new FormData();
      for (const [key, value] of flatten(item.body)) form.append(key, value);
      body = form;
      // A new boundary is written with the body; the captured header's boundary would not match.
      delete headers['content-type'];
    } else if (raw) {
      notes.push(
        `the ${raw.mimeType} body (${raw.size} bytes) is not kept in the capture; sent without a body`,
      );
    } else if (typeof item.body === 'string') {
      body = item.body;
    } else if (type === 'application/x-www-form-urlencoded') {
      body = new URLSearchParams(flatten(item.body)).toString();
    } else if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml')) {
      body = XML.build(item.body) as string;
      notes.push('XML re-serialised from the parsed body');
    } else if (type === 'application/json' || type.endsWith('+json')) {
      body = JSON.stringify(item.body ?? {});
    } else if (!isEmptyObject(item.body)) {
      body = JSON.stringify(item.body);
      notes.push(`body sent as JSON (the capture does not say how ${type || 'it'} was encoded)`);
    }
    // The re-encoded body is UTF-8, whatever charset the original declared.
    if (
      typeof body === 'string' &&
      /;\s*charset=/i.test(contentType) &&
      !/;\s*charset="?utf-?8"?/i.test(contentType)
    ) {
      headers['content-type'] = contentType.replace(/;\s*charset=[^;]*/i, '; charset=utf-8');
    }
  }
  const skipped = files.filter((f) => f.field !== 'body');
  if (skipped.length > 0) {
    notes.push(
      `${plural(skipped.length, 'file')} not forwarded (${skipped.map((f) => `${f.field}: ${f.filename}`).join(', ')})`,
    );
  }
  return { url, method, headers, body, notes };
}

// Mirrors the parser options in src/webhooks/parse.ts: attributes under '@_', text under '#text'.
const XML = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', textNodeName: '#text' });

/**
 * Re-sends a capture and describes the answer: `→ forwarded: 200 OK (12 ms)`. Never throws, and refuses
 * no target: it is the developer's own receiver. undici's request() rather than fetch(), because fetch
 * adds headers of its own (accept-language, sec-fetch-mode, accept-encoding) the provider never sent;
 * like fetch with redirect: 'manual', it shows a redirect instead of following it.
 */
export async function forward(target: URL, item: CapturedItem): Promise<string> {
  const started = performance.now();
  const elapsed = () => `${Math.round(performance.now() - started)} ms`;
  let notes = '';
  try {
    const plan = planForward(target, item);
    notes = plan.notes.map((n) => `\n  note: ${oneLine(n)}`).join('');
    let { headers, body } = plan;
    let bytes: string | Buffer | undefined;
    if (body instanceof FormData) {
      // Serialised by the platform's multipart encoder, which also gives the boundary.
      const encoded = new Response(body);
      headers = { ...headers, 'content-type': encoded.headers.get('content-type')! };
      bytes = Buffer.from(await encoded.arrayBuffer());
      body = undefined;
    } else {
      bytes = body;
    }
    const res = await request(plan.url, {
      method: plan.method as Dispatcher.HttpMethod,
      headers,
      body: bytes ?? null,
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    const answer = await res.body.text();
    const status = `${res.statusCode} ${http.STATUS_CODES[res.statusCode] ?? ''}`.trim();
    const preview =
      res.statusCode >= 300 && answer !== '' ? `\n${text(truncate(answer, RESPONSE_PREVIEW_CHARS))}` : '';
    return `→ forwarded: ${status} (${elapsed()})${notes}${preview}`;
  } catch (err) {
    const timedOut =
      err instanceof Error &&
      (err.name === 'TimeoutError' || (err.cause as Error | undefined)?.name === 'TimeoutError');
    const why = timedOut ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} s` : describe(err);
    return `→ forward failed: ${why} (${elapsed()})${notes}`;
  }
}

/**
 * A parsed form/query value back to key/value pairs the way qs writes them, so hookflow (qs) or any
 * qs-style parser reads the same structure: {a: {b: '1'}} → a[b]=1; arrays of scalars repeat the key
 * (a=1&a=2); arrays holding objects are indexed (a[0][b]=1).
 */
export function flatten(value: unknown, prefix = ''): [string, string][] {
  if (value === null || value === undefined) return prefix ? [[prefix, '']] : [];
  if (Array.isArray(value)) {
    const scalars = value.every((v) => v === null || typeof v !== 'object');
    return value.flatMap((v, i) => flatten(v, scalars ? prefix : `${prefix}[${i}]`));
  }
  if (typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => flatten(v, prefix ? `${prefix}[${k}]` : k));
  }
  return prefix ? [[prefix, String(value)]] : [];
}

// ---------------------------------------------------------------------------------------------------
// Small helpers

function headerValue(headers: CapturedItem['headers'], name: string): string | undefined {
  const v = headers?.[name];
  return Array.isArray(v) ? v[0] : v;
}

function isEmptyObject(v: unknown): boolean {
  return (
    v === undefined ||
    (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)
  );
}

/** m:ss */
function clock(ms: number): string {
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

const truncate = (s: string, n: number) =>
  s.length > n ? `${s.slice(0, n)}… (${s.length - n} more characters)` : s;

/** An error as a short phrase: fetch's "fetch failed" says nothing, its cause does (ECONNREFUSED …). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
