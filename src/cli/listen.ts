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
import { parseArgs } from 'node:util';
import { DEFAULT_LISTEN_SECONDS, MAX_LISTEN_SECONDS } from '../webhooks/test-listener.js';
import { CliError, exitStatusOf, SERVER_OPTIONS, serverFrom } from './api.js';
import { type Output, Session } from './listen/session.js';

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

export async function listen(args: string[], deps: ListenDeps): Promise<number> {
  const stdout = deps.stdout ?? process.stdout;
  const stderr = deps.stderr ?? process.stderr;
  const { values, positionals } = parseArgs({
    args,
    options: {
      'forward-to': { type: 'string' },
      timeout: { type: 'string' },
      'keep-listening': { type: 'boolean' },
      ...SERVER_OPTIONS,
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) return deps.showHelp(false);
  const [workflowId, ...extra] = positionals;
  if (workflowId === undefined) return deps.showHelp(true);
  return exitStatusOf(stderr, async () => {
    if (extra.length > 0) {
      throw new CliError(`Unexpected argument "${extra[0]}". Run \`hookflow listen --help\`.`, 2);
    }
    const options = {
      workflowId,
      ...serverFrom(values, deps.env),
      timeoutSeconds: timeoutFrom(values.timeout),
      keepListening: values['keep-listening'] === true,
      forwardTo: values['forward-to'] === undefined ? undefined : forwardUrlFrom(values['forward-to']),
    };
    return new Session(options, { stdout, stderr, signals: deps.signals ?? process }).run();
  });
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
