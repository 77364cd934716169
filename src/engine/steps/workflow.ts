/**
 * `workflow`: run another workflow as a sub-workflow (SPEC 7f). Its execution (mode `sub`) gets
 * the item `{"body": <input>, "parent": {"executionId", "workflowId", "step"}}` and runs the
 * target's published version (its draft under a test run: executions/sub-workflows.ts).
 *
 * `wait: true` (the default): this execution parks (`waiting`, holding no executor slot) until
 * the child ends; the step then outputs the child's last output, or fails with the child's error.
 * The child's end makes this execution due at once (queue/finished.ts); besides, the parked step
 * looks again after a pause that doubles from 1 s to an hour, which covers a child that ended
 * before this park was recorded, and a process that died between the child's end and the wake.
 * `wait: false`: outputs `{"executionId"}` at once.
 *
 * The child is started once per execution, step and forEach iteration, however often the step
 * runs (a retry of the attempt, a resume): the service finds the one started before. The record
 * carries `childExecutionId`.
 */
import Type from 'typebox';
import { ServiceRefusal } from '../services.js';
import { defineStep, Expr, StepFailure } from './types.js';

/** The parked step's first look after 1 s, then doubling, up to an hour between looks. */
const FIRST_LOOK_MS = 1_000;
const MAX_LOOK_MS = 3_600_000;

interface Parked {
  child: string;
  looks: number;
}

const refused = (err: unknown): never => {
  if (err instanceof ServiceRefusal)
    throw new StepFailure(err.message, {
      ...(err.field ? { field: err.field } : {}),
      ...(err.code ? { code: err.code } : {}),
    });
  throw err;
};

export const workflowStep = defineStep({
  type: 'workflow',
  description: 'Run another workflow (a sub-workflow) with an input, and wait for its result.',
  config: Type.Object(
    {
      workflowId: Type.String({ minLength: 1, maxLength: 200 }),
      input: Type.Optional(Type.Unknown()),
      wait: Type.Optional(Expr(Type.Boolean())),
    },
    { additionalProperties: false },
  ),
  async run(config, { services, scope, step, indices, resume }) {
    if (!services || !scope || !step)
      throw new StepFailure('Sub-workflows cannot run here (this engine runs without the executor).');
    let parked = resume?.state as Parked | undefined;
    const child =
      parked?.child ??
      (
        await services
          .startWorkflow({
            executionId: scope.execution.id,
            workflowId: scope.execution.workflowId,
            mode: scope.execution.mode,
            step,
            indices: indices ?? [],
            targetWorkflowId: config.workflowId,
            input: config.input ?? null,
          })
          .catch(refused)
      ).executionId;
    const details = { childExecutionId: child };
    if (config.wait === false) return { output: { executionId: child }, details };
    const state = await services.workflowState(child).catch(refused);
    if (state.status === 'succeeded') return { output: state.output, details };
    if (state.status === 'failed')
      throw new StepFailure(state.error.message, {
        details,
        ...(state.error.code ? { code: state.error.code } : {}),
      });
    parked = { child, looks: (parked?.looks ?? 0) + 1 };
    const pause = Math.min(FIRST_LOOK_MS * 2 ** (parked.looks - 1), MAX_LOOK_MS);
    return { output: null, details, park: { until: new Date(Date.now() + pause), state: parked } };
  },
});
