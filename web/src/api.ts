/**
 * The one way the UI talks to hookflow: JSON over /api/v1 with the session cookie. Every write
 * carries the session's CSRF token. Failures become ApiError with the server's sentence and hint
 * (SPEC 3 error bodies), or a sentence of our own when the server could not be reached.
 */
import { withBase } from './base';
import type { AuthStatus, User } from './types';

export interface FieldProblem {
  field: string;
  message: string;
}

export interface ConflictingWorkflow {
  id: string;
  name: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly hint: string | undefined;
  readonly fields: FieldProblem[];
  /** `path_conflict`: the other workflow on the method+path, to name and link. */
  readonly conflictingWorkflow: ConflictingWorkflow | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    hint?: string,
    fields?: FieldProblem[],
    conflictingWorkflow?: ConflictingWorkflow,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.hint = hint;
    this.fields = fields ?? [];
    this.conflictingWorkflow = conflictingWorkflow;
  }
}

let csrfToken: string | null = null;
let onSessionLost: ((error: ApiError) => void) | undefined;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when a request answers 401: the session expired or was signed out elsewhere. */
export function setSessionLostHandler(handler: (error: ApiError) => void): void {
  onSessionLost = handler;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(withBase(`/api/v1${path}`), {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(
      0,
      'network_error',
      'hookflow could not be reached.',
      'Check that the server is running and that you are online, then try again.',
    );
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: unknown;
  try {
    data = text === '' ? undefined : JSON.parse(text);
  } catch {
    data = undefined;
  }
  if (!res.ok) {
    const e = (data ?? {}) as {
      code?: unknown;
      message?: unknown;
      hint?: unknown;
      fields?: unknown;
      conflictingWorkflow?: unknown;
    };
    const other = e.conflictingWorkflow as Partial<ConflictingWorkflow> | undefined;
    const error =
      typeof e.message === 'string'
        ? new ApiError(
            res.status,
            typeof e.code === 'string' ? e.code : `http_${res.status}`,
            e.message,
            typeof e.hint === 'string' ? e.hint : undefined,
            Array.isArray(e.fields) ? (e.fields as FieldProblem[]) : undefined,
            typeof other?.id === 'string' && typeof other.name === 'string'
              ? { id: other.id, name: other.name }
              : undefined,
          )
        : new ApiError(
            res.status,
            `http_${res.status}`,
            `The server answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}.`,
            res.status >= 500 ? 'Try again in a moment; the server log has the details.' : undefined,
          );
    if (res.status === 401 && !path.startsWith('/auth/')) onSessionLost?.(error);
    throw error;
  }
  return data as T;
}

/** Any thrown value as an ApiError, so every error is shown the same way. */
export function asApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return new ApiError(0, 'client_error', err instanceof Error ? err.message : String(err));
}

export const auth = {
  status: () => api<AuthStatus>('GET', '/auth/status'),
  setup: (email: string, password: string, setupCode: string) =>
    api<{ user: User; csrfToken: string }>('POST', '/auth/setup', { email, password, setupCode }),
  login: (email: string, password: string) =>
    api<{ user: User; csrfToken: string }>('POST', '/auth/login', { email, password }),
  logout: () => api<void>('POST', '/auth/logout'),
  acceptInvitation: (token: string, password: string) =>
    api<{ user: User; csrfToken: string }>('POST', '/members/invitations/accept', { token, password }),
};

/** Query string from defined values only. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') search.set(k, String(v));
  const text = search.toString();
  return text ? `?${text}` : '';
}
