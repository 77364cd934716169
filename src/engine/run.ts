/**
 * The step loop: runs a workflow version's steps in order over one trigger item. Knows nothing of
 * HTTP or the database: it gets the workflow and the item and returns what happened. A failing
 * step is data on the result (status `failed`, the step named in `error`), never an exception.
 */
import type { Workflow } from '../workflows/model.js';

export interface StepResult {
  name: string;
  type: string;
  status: 'succeeded' | 'failed' | 'filtered';
  output: unknown;
  error: ExecutionError | null;
  startedAt: string;
  finishedAt: string;
}

export interface ExecutionError {
  message: string;
  step?: string;
  field?: string;
}

export interface RunResult {
  status: 'succeeded' | 'failed' | 'filtered';
  steps: StepResult[];
  error: ExecutionError | null;
  /** The last step's output (the trigger item when there are no steps). */
  output: unknown;
  /** Set by a `respond` step. */
  response?: { status: number; headers: Record<string, string>; body: unknown };
}

export interface RunContext {
  executionId: string;
  mode: 'test' | 'production';
}

export async function runWorkflow(workflow: Workflow, item: unknown, ctx: RunContext): Promise<RunResult> {
  const steps: StepResult[] = [];
  const output: unknown = item;
  for (const step of workflow.steps) {
    const now = new Date().toISOString();
    const error = { message: `Step type "${step.type}" is not available in this version of hookflow.`, step: step.name };
    steps.push({ name: step.name, type: step.type, status: 'failed', output: null, error, startedAt: now, finishedAt: now });
    return { status: 'failed', steps, error, output: null };
  }
  void ctx;
  return { status: 'succeeded', steps, error: null, output };
}
