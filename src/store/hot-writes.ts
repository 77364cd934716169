/**
 * Running hot writes (store.ts `HotWrite`) with a dialect's statements, and the portable Kysely
 * statements. Apart from store.ts because the dialects (sqlite/store.ts, postgres/store.ts) use these while
 * store.ts's factory loads the dialects: in one module they made an import cycle.
 */
import type { Transaction } from 'kysely';
import { splitBlob } from './blobs.js';
import type { Database } from './schema.js';
import type { HotStatements, HotWrite } from './store.js';

/**
 * Runs hot writes in one transaction with the given statements; per write: a completion whether it
 * was recorded, an insert true.
 */
export async function runHotWrites(
  hot: HotStatements,
  trx: Transaction<Database>,
  writes: readonly HotWrite[],
): Promise<boolean[]> {
  const out: boolean[] = [];
  for (const w of writes) {
    if (w.kind === 'insert') {
      await hot.insertExecution(trx, w.row, w.fields);
      out.push(true);
    } else out.push(...(await hot.completeExecutions(trx, [w.completion])));
  }
  return out;
}

export function kyselyHotStatements(): HotStatements {
  return {
    async insertExecution(trx, row, fields) {
      await trx.insertInto('executions').values(row).execute();
      if (fields?.length) await trx.insertInto('execution_fields').values(fields).execute();
    },
    async insertBlobs(trx, rows) {
      for (const blob of rows) {
        const { row, parts } = splitBlob(blob);
        await trx.insertInto('blobs').values(row).execute();
        for (const part of parts) await trx.insertInto('blob_parts').values(part).execute();
      }
    },
    async completeExecutions(trx, completions) {
      const recorded: boolean[] = [];
      for (const c of completions) {
        const res = await trx
          .updateTable('executions')
          .set({
            status: c.status,
            steps: c.steps,
            error: c.error,
            finished_at: c.finishedAt,
            ...(c.runAfter === null ? {} : { run_after: c.runAfter }),
            resume_state: c.resumeState,
            locked_by: null,
            locked_until: null,
          })
          .where('id', '=', c.id)
          .where('locked_by', '=', c.lockedBy)
          .executeTakeFirst();
        const done = Number(res.numUpdatedRows) > 0;
        // A park appends its checkpoint's part; a finish after a resume deletes the parts.
        const part = c.checkpointPart;
        if (done && part)
          await trx
            .insertInto('execution_checkpoints')
            .values({ execution_id: c.id, seq: part.seq, state: part.state, records: part.records })
            .execute();
        else if (done && c.dropCheckpoint)
          await trx.deleteFrom('execution_checkpoints').where('execution_id', '=', c.id).execute();
        recorded.push(done);
      }
      return recorded;
    },
  };
}
