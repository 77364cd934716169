/**
 * The one error type of hookflow. Every failure a caller can see has a stable snake_case `code`
 * (SPEC: codes are API — never rename or reuse one), an HTTP status kept beside it in ERROR_STATUS,
 * a sentence for a person and, where it helps, a hint saying what to do next.
 *
 * `docs/errors.md` has one section per code; test/errors.test.ts fails when the two differ.
 */

export const ERROR_STATUS = {
  validation_failed: 400,
  invalid_body: 400,
  unauthorized: 401,
  ip_not_allowed: 403,
  csrf_failed: 403,
  forbidden: 403,
  handshake_failed: 403,
  setup_code_required: 403,
  not_found: 404,
  route_not_found: 404,
  invitation_not_found: 404,
  webhook_not_registered: 404,
  test_webhook_not_listening: 404,
  not_waiting: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  path_conflict: 409,
  setup_done: 409,
  not_published: 409,
  credential_in_use: 409,
  already_resumed: 409,
  payload_too_large: 413,
  schema_mismatch: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  execution_failed: 500,
  output_too_large: 500,
  overloaded: 503,
  not_ready: 503,
  store_unavailable: 503,
  execution_timeout: 504,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldError {
  /** JSON pointer-ish path of the offending field, e.g. `/trigger/methods/0`. */
  field: string;
  message: string;
}

export interface AppErrorOptions {
  hint?: string;
  /** Offending fields, for `validation_failed`. */
  fields?: FieldError[];
  /** Extra response headers, e.g. `Allow` for 405, `Retry-After` for 429/503. */
  headers?: Record<string, string>;
  /** Execution the error is about (`execution_failed`, `execution_timeout`). */
  executionId?: string;
  /** The other workflow that holds the method+path (`path_conflict`), so a UI can name and link it. */
  conflictingWorkflow?: ConflictingWorkflow;
  cause?: unknown;
}

export interface ConflictingWorkflow {
  id: string;
  name: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly hint: string | undefined;
  readonly fields: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly executionId: string | undefined;
  readonly conflictingWorkflow: ConflictingWorkflow | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.hint = options.hint;
    this.fields = options.fields;
    this.headers = options.headers;
    this.executionId = options.executionId;
    this.conflictingWorkflow = options.conflictingWorkflow;
  }

  /** The wire shape of SPEC 3: `{code, message, hint?}` plus `fields`/`executionId`/`conflictingWorkflow` where they apply. */
  toJSON(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message };
    if (this.hint !== undefined) body.hint = this.hint;
    if (this.fields !== undefined) body.fields = this.fields;
    if (this.executionId !== undefined) body.executionId = this.executionId;
    if (this.conflictingWorkflow !== undefined) body.conflictingWorkflow = this.conflictingWorkflow;
    return body;
  }
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  hint?: string;
  fields?: FieldError[];
  executionId?: string;
  conflictingWorkflow?: ConflictingWorkflow;
}

/** Anything thrown becomes an AppError at the edge; unknown throwables are `internal_error`. */
export function coerceError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('internal_error', 'Something went wrong on our side.', {
    hint: 'Try again; if it keeps happening, the server log has the details under this request id.',
    cause: err,
  });
}
