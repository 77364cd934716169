/**
 * `workflow` (SPEC 7f; src/engine/steps/workflow.ts): run another workflow with an input (its
 * trigger item's `body`), waiting for its result unless told not to.
 */
import type { DraftOf, StepForm } from './types';
import { bodyToText, textToBody } from './values';

export type WorkflowDraft = DraftOf<
  'workflow',
  {
    /** The target's id; '' until one is chosen. */
    workflowId: string;
    /** JSON or text, as a body is. */
    input: string;
    wait: boolean;
    /** `wait` stored as an expression: kept as written (the toggle shows no expression). */
    waitExpr: string;
  }
>;

export const workflowForm: StepForm<WorkflowDraft> = {
  type: 'workflow',
  label: 'Run a workflow',
  description: 'Run another workflow with an input, and use its result',
  icon: '↗',
  keys: ['workflowId', 'input', 'wait'],
  read: (step) => ({
    workflowId: typeof step.workflowId === 'string' ? step.workflowId : '',
    input: bodyToText(step.input),
    wait: step.wait !== false,
    waitExpr: typeof step.wait === 'string' ? step.wait : '',
  }),
  summary: (d) => (d.workflowId ? `Runs a workflow${d.wait ? ' and waits' : ''}` : 'No workflow chosen yet'),
  write(d, step, at, problems) {
    step.workflowId = d.workflowId;
    if (d.workflowId === '') problems.push({ field: `${at}/workflowId`, message: 'needs a workflow to run' });
    const input = textToBody(d.input);
    if (input !== undefined) step.input = input;
    if (d.waitExpr !== '') step.wait = d.waitExpr;
    else if (!d.wait) step.wait = false;
  },
};

/** A top-level member of the input a target workflow was seen to take. */
export interface InputMember {
  name: string;
  type: string;
  example: unknown;
}

const typeName = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * The members of the input a target takes (what it reads as `body`): its newest test event's body
 * when that is an object, else its learned fields under `body.` (their first names).
 */
export function inputMembers(
  learned: readonly { path: string; type: string; example: unknown }[],
  newestBody: unknown,
): InputMember[] {
  if (typeof newestBody === 'object' && newestBody !== null && !Array.isArray(newestBody))
    return Object.entries(newestBody).map(([name, example]) => ({ name, type: typeName(example), example }));
  const out = new Map<string, InputMember>();
  for (const f of learned) {
    const m = /^body\.([^.[]+)(.*)$/.exec(f.path);
    if (!m || out.has(m[1]!)) continue;
    out.set(
      m[1]!,
      m[2]
        ? { name: m[1]!, type: m[2].startsWith('[') ? 'array' : 'object', example: undefined }
        : { name: m[1]!, type: f.type, example: f.example },
    );
  }
  return [...out.values()];
}
