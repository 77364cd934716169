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
  /** JSONata's error code, or `budget_depth` / `budget_time` / `execution_timeout`. */
  code?: string;
}
