/**
 * What an expression sees (SPEC 7): `$` (the input), `$trigger`, `$steps`, `$execution`, and in a
 * loop `$item`, `$index`. The engine evaluates against it (engine/expressions.ts adds its
 * deadline); the UI's previews build one from a test capture (web/src/lib/expressions.ts).
 */
export interface ExpressionScope {
  input: unknown;
  trigger: unknown;
  steps: Record<string, unknown>;
  execution: { id: string; mode: string; workflowId: string; attempt: number };
  /** Inside a `forEach`: the element (`$item`) and its position (`$index`); the innermost loop's. */
  item?: unknown;
  index?: number | undefined;
}
