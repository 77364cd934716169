/**
 * What the CLI commands that talk to a running server share: where the server is (--url,
 * HOOKFLOW_URL, or 127.0.0.1:HOOKFLOW_PORT), the API token (--token or HOOKFLOW_TOKEN), and turning
 * the server's `{code, message, hint}` answers into errors with an exit code.
 */
import http from 'node:http';

export type Env = Record<string, string | undefined>;

/** Where a command writes (stdout, stderr; a test's collector). */
export interface Output {
  write(text: string): unknown;
}

/** The options of every command that talks to a running server (parseArgs). */
export const SERVER_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface ApiTarget {
  baseUrl: string;
  token: string;
}

/** The server and token from --url/--token or the environment. */
export function serverFrom(
  values: { url?: string | undefined; token?: string | undefined },
  env: Env,
): ApiTarget {
  return { baseUrl: baseUrlFrom(values.url, env), token: tokenFrom(values.token, env) };
}

/**
 * A command's work as its exit status: a CliError is printed (message, then hint) and ends the
 * command with its code; anything else is a bug and goes on up.
 */
export async function exitStatusOf(stderr: Output, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof CliError) {
      stderr.write(`hookflow: ${err.message}\n${err.hint ? `${err.hint}\n` : ''}`);
      return err.exitCode;
    }
    throw err;
  }
}

/** A failure that ends the command with a message, an optional hint and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly hint?: string,
  ) {
    super(message);
  }
}

export function baseUrlFrom(flag: string | undefined, env: Env): string {
  const fromEnv = env.HOOKFLOW_URL?.trim() || undefined;
  let raw = flag ?? fromEnv;
  if (raw === undefined) {
    const port = env.HOOKFLOW_PORT?.trim() || '5678';
    if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) {
      throw new CliError(`HOOKFLOW_PORT=${JSON.stringify(port)} is not a port number.`, 2);
    }
    raw = `http://127.0.0.1:${port}`;
  }
  const name = flag !== undefined ? '--url' : 'HOOKFLOW_URL';
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
    return url.toString().replace(/\/+$/, '');
  } catch {
    throw new CliError(
      `${name}=${JSON.stringify(raw)} is not an http:// or https:// URL.`,
      2,
      "Pass the server's address, e.g. --url http://127.0.0.1:5678.",
    );
  }
}

export function tokenFrom(flag: string | undefined, env: Env): string {
  const token = (flag ?? env.HOOKFLOW_TOKEN ?? '').trim();
  if (token === '') {
    throw new CliError(
      'An API token is needed: pass --token TOKEN or set HOOKFLOW_TOKEN.',
      2,
      'Create one with `hookflow tokens create --name cli` (run it where the server runs, with the same data dir or database).',
    );
  }
  return token;
}

export class ApiError extends CliError {
  constructor(
    readonly status: number,
    message: string,
    hint?: string,
  ) {
    super(message, 1, hint);
  }
}

/** The server's `{code, message, hint}` (SPEC 8), or the status line when the body is not ours. */
export async function apiError(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { message?: unknown; hint?: unknown };
    if (typeof body.message === 'string') {
      return new ApiError(res.status, body.message, typeof body.hint === 'string' ? body.hint : undefined);
    }
  } catch {
    // not JSON: fall through to the status line
  }
  return new ApiError(
    res.status,
    `hookflow answered ${res.status} ${res.statusText || http.STATUS_CODES[res.status] || ''}`.trim(),
  );
}

export function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.message) return cause.message;
  return err instanceof Error ? err.message : String(err);
}

/** Call the API with the token; JSON in, JSON out; non-2xx becomes an ApiError. */
export async function callApi<T>(
  target: ApiTarget,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${target.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${target.token}`,
        accept: 'application/json',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new CliError(
      `Could not reach hookflow at ${target.baseUrl}: ${describe(err)}.`,
      1,
      'Is the server running (`hookflow start`)? Point --url or HOOKFLOW_URL at it.',
    );
  }
  if (!res.ok) throw await apiError(res);
  return (res.status === 204 ? undefined : await res.json()) as T;
}
