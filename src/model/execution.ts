/**
 * Why an execution runs (SPEC 1): a test call or run, live traffic, an error workflow for a failed
 * execution (SPEC 7c), an alert workflow for a trigger that needs attention (SPEC 7g).
 */
export type ExecutionMode = 'test' | 'production' | 'error' | 'alert' | 'sub';

/**
 * How an execution records a failure (SPEC 7): on the execution (`error`) and on the step that
 * failed (its record's `error`). The engine writes it (engine/run.ts); the API returns it as
 * stored; the UI shows it (web/src/types.ts takes this type, not a copy).
 */
export interface ExecutionError {
  message: string;
  step?: string;
  /** JSON pointer inside the step's configuration, e.g. `/fields/total`. */
  field?: string;
  /** The JSONata text of the expression that failed. */
  expression?: string;
  /** 1-based character position in `expression`. */
  position?: number;
  /** JSONata's error code, or `budget_depth` / `budget_time` / `execution_timeout` / `credential_expired`. */
  code?: string;
}
