/**
 * What an expression sees (SPEC 7): `$` (the input), `$trigger`, `$steps`, `$execution`, `$vars`
 * (the variables that are not secret: SPEC 7e), and in a loop `$item`, `$index`; `$secrets` only
 * in the fields a step type allows them (an `http` step's url, headers, query and body…). The engine evaluates against it (engine/expressions.ts adds its
 * deadline); the UI's previews build one from a test capture (web/src/lib/expressions.ts).
 */
export interface ExpressionScope {
  input: unknown;
  trigger: unknown;
  steps: Record<string, unknown>;
  /**
   * `resumeUrl` (SPEC 7g): the URL whose first call resumes this execution's `wait` for a call;
   * computed when read (engine/resume-url.ts). Absent where the engine has no base URL and key.
   */
  execution: { id: string; mode: string; workflowId: string; attempt: number; resumeUrl?: string };
  /** Inside a `forEach`: the element (`$item`) and its position (`$index`); the innermost loop's. */
  item?: unknown;
  index?: number | undefined;
  /** `$vars`: name → value of every variable that is not secret. */
  vars?: Record<string, string> | undefined;
  /** `$secrets`: name → clear value of every secret variable; bound only where allowed. */
  secrets?: Record<string, string> | undefined;
}
