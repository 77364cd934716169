/**
 * Waits for a call or an event (SPEC 7g; executions/waits.ts says how they are used). Each resume
 * is one conditional update (`status = 'waiting'`), so of any number of concurrent callers, in any
 * number of processes, exactly one resumes a wait.
 */
import type { ExecutionWaitsTable } from './schema.js';
import type { Db } from './store.js';

export type WaitRow = ExecutionWaitsTable;

/** The smallest UUIDv7 (ids.ts) of the millisecond `ms`: ids from it on were made at `ms` or later. */
export function idFloor(ms: number): string {
  const t = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${t.slice(0, 8)}-${t.slice(8)}-7000-0000-000000000000`;
}

/** Ends a wait that is still waiting, the one conditional update every resume goes through. */
async function settle(
  db: Db,
  executionId: string,
  step: string,
  set: Pick<WaitRow, 'status' | 'resumed_at'> & { item?: string },
): Promise<boolean> {
  const res = await db
    .updateTable('execution_waits')
    .set(set)
    .where('execution_id', '=', executionId)
    .where('step', '=', step)
    .where('status', '=', 'waiting')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export const waitsRepo = {
  /** Registers a wait; one already there (the step run again) stays as it is. */
  async insertIfAbsent(db: Db, row: WaitRow): Promise<void> {
    await db
      .insertInto('execution_waits')
      .values(row)
      .onConflict((oc) => oc.columns(['execution_id', 'step']).doNothing())
      .execute();
  },

  async get(db: Db, executionId: string, step: string): Promise<WaitRow | undefined> {
    return db
      .selectFrom('execution_waits')
      .selectAll()
      .where('execution_id', '=', executionId)
      .where('step', '=', step)
      .executeTakeFirst();
  },

  /** An execution's waits, oldest first. */
  async ofExecution(db: Db, executionId: string): Promise<WaitRow[]> {
    return db
      .selectFrom('execution_waits')
      .selectAll()
      .where('execution_id', '=', executionId)
      .orderBy('created_at')
      .execute();
  },

  /** Resumes a wait still waiting with `item` (JSON); whether this call did. */
  resume(db: Db, executionId: string, step: string, item: string, now: string): Promise<boolean> {
    return settle(db, executionId, step, { status: 'resumed', item, resumed_at: now });
  },

  /** Ends a wait still waiting by its timeout; whether this call did. */
  timeOut(db: Db, executionId: string, step: string, now: string): Promise<boolean> {
    return settle(db, executionId, step, { status: 'timed_out', resumed_at: now });
  },

  /** Event waits: requests of the workflow accepted from `from` on are still to be looked at. */
  async lookFrom(db: Db, executionId: string, step: string, from: string): Promise<void> {
    await db
      .updateTable('execution_waits')
      .set({ look_from: from })
      .where('execution_id', '=', executionId)
      .where('step', '=', step)
      .execute();
  },

  /** The event waits still waiting on a workflow, with their match templates and keys. */
  async waitingOn(
    db: Db,
    workflowId: string,
  ): Promise<Pick<WaitRow, 'execution_id' | 'step' | 'match' | 'match_key'>[]> {
    return db
      .selectFrom('execution_waits')
      .select(['execution_id', 'step', 'match', 'match_key'])
      .where('workflow_id', '=', workflowId)
      .where('status', '=', 'waiting')
      .execute();
  },

  /** The workflows some event wait is waiting on. */
  async watched(db: Db): Promise<string[]> {
    const rows = await db
      .selectFrom('execution_waits')
      .select('workflow_id')
      .distinct()
      .where('kind', '=', 'event')
      .where('status', '=', 'waiting')
      .execute();
    return rows.map((r) => r.workflow_id!).filter((id) => id !== null);
  },

  /**
   * Production requests of a workflow accepted from `fromMs` on, oldest first, at most `limit`:
   * their ids, items (JSON) and acceptance times. Through the (workflow_id, id) index: ids are
   * UUIDv7, ordered by the time they were made.
   */
  async productionSince(
    db: Db,
    workflowId: string,
    fromMs: number,
    limit: number,
  ): Promise<{ id: string; trigger: string; created_at: string }[]> {
    return db
      .selectFrom('executions')
      .select(['id', 'trigger', 'created_at'])
      .where('workflow_id', '=', workflowId)
      .where('id', '>=', idFloor(fromMs))
      .where('mode', '=', 'production')
      .orderBy('id')
      .limit(limit)
      .execute();
  },

  /** When an execution was accepted (a wait's look-back starts there). */
  async createdAt(db: Db, executionId: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('executions')
      .select('created_at')
      .where('id', '=', executionId)
      .executeTakeFirst();
    return row?.created_at;
  },
};
