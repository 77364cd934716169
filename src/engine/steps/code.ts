/**
 * `code`: JavaScript (ES2023) as a function body, run in the WebAssembly sandbox of
 * code-sandbox.ts with `$input`, `$trigger`, `$steps` and `$execution`, and inside a `forEach`
 * `$item` and `$index` (deep copies, parsed on first read); what it returns (as JSON) is the output, and its `console.log` lines are the
 * record's `logs` (details). `source` is JavaScript, not a template: `{{ … }}` in it is not an
 * expression. A syntax error is refused when the workflow is saved, with its line and column.
 *
 * Not pure: a run may take up to HOOKFLOW_CODE_TIMEOUT_MS (then it is cut off, inside a native call
 * too: its code thread is ended), far more than a before-commit slice; code runs in code threads
 * of the executor's engine thread. Contained, though: it has no effect outside the execution
 * (queue/pure-batch.ts runs it in a batch).
 */
import Type from 'typebox';
import { checkSyntax, type CodeError, runCode } from '../code-sandbox.js';
import { defineStep, StepFailure } from './types.js';

export const MAX_SOURCE_CHARS = 100_000;

/** Limits when the engine passes none (config: HOOKFLOW_CODE_MEMORY_MB, HOOKFLOW_CODE_TIMEOUT_MS). */
export const DEFAULT_CODE_LIMITS = { memoryBytes: 64 * 1024 * 1024, timeoutMs: 1_000 };

export const codeStep = defineStep({
  type: 'code',
  description: 'Run JavaScript on the item; what it returns is the output.',
  contained: true,
  config: Type.Object(
    { source: Type.String({ maxLength: MAX_SOURCE_CHARS }) },
    { additionalProperties: false },
  ),
  literal: ['source'],
  check(config) {
    const error = checkSyntax(config.source);
    return error ? [{ field: '/source', message: withPosition(error) }] : [];
  },
  async run(config, ctx) {
    const limits = ctx.limits ?? DEFAULT_CODE_LIMITS;
    const result = await runCode({
      source: config.source,
      input: ctx.input,
      trigger: ctx.scope?.trigger,
      steps: ctx.scope?.steps,
      execution: ctx.scope?.execution,
      loop: ctx.scope?.index === undefined ? undefined : { item: ctx.scope.item, index: ctx.scope.index },
      memoryBytes: limits.memoryBytes,
      timeoutMs: limits.timeoutMs,
      until: ctx.scope?.until,
    });
    if (!result.ok) throw new StepFailure(withPosition(result.error), { details: { logs: result.logs } });
    return { output: result.value, details: { logs: result.logs } };
  },
});

/** `message (at line:column)`, the position in the user's source. */
function withPosition(error: CodeError): string {
  return error.line === undefined ? error.message : `${error.message} (at ${error.line}:${error.column})`;
}
