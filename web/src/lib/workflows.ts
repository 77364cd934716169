/** Workflow API calls shared by pages. */
import { api, qs } from '../api';
import type { Execution, Page, Workflow } from '../types';

/** Every workflow (pages of 200; a self-hosted instance rarely has more than a few hundred). */
export async function listAllWorkflows(max = 2000): Promise<Workflow[]> {
  const all: Workflow[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<Workflow> = await api('GET', `/workflows${qs({ limit: 200, cursor })}`);
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor && all.length < max);
  return all;
}

export async function lastExecution(
  workflowId: string,
  mode?: 'test' | 'production',
): Promise<Execution | undefined> {
  const page = await api<Page<Execution>>('GET', `/executions${qs({ workflowId, mode, limit: 1 })}`);
  return page.items[0];
}

export const setActive = (id: string, active: boolean) =>
  api<Workflow>('POST', `/workflows/${encodeURIComponent(id)}/${active ? 'activate' : 'deactivate'}`);

/** The trigger as the API takes it back: without the URLs it computed. */
export function triggerInput(w: Workflow) {
  const { testUrl: _t, productionUrl: _p, ...rest } = w.trigger;
  return rest;
}
