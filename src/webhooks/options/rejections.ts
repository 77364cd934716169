/**
 * The last refused calls of each trigger (FIELD-NOTES 15: auth failures must not be invisible):
 * when, which code, the method and caller address — never the body or credentials. Kept in memory
 * per process (a bounded ring per workflow); the totals are in the metrics.
 */
export interface Rejection {
  at: string;
  mode: 'test' | 'production';
  code: string;
  message: string;
  method: string;
  ip: string;
}

const PER_WORKFLOW = 50;
const MAX_WORKFLOWS = 10_000;

export class Rejections {
  readonly #byWorkflow = new Map<string, Rejection[]>();

  record(workflowId: string, rejection: Rejection): void {
    let list = this.#byWorkflow.get(workflowId);
    if (!list) {
      if (this.#byWorkflow.size >= MAX_WORKFLOWS) this.#byWorkflow.clear();
      list = [];
      this.#byWorkflow.set(workflowId, list);
    }
    list.unshift(rejection);
    if (list.length > PER_WORKFLOW) list.pop();
  }

  /** Newest first. */
  list(workflowId: string): Rejection[] {
    return this.#byWorkflow.get(workflowId) ?? [];
  }
}
