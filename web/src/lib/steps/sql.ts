/**
 * `sql` (SPEC 7e): a postgres or mysql credential, one statement as literal SQL, and its parameters
 * ($1, $2… for PostgreSQL, ? for MySQL), each an expression with the field picker. An expression
 * typed into the statement is refused here as the server refuses it, naming the field.
 */
import type { DraftOf, Row, StepForm } from './types';
import { firstLine, numberish, row, valueToText } from './values';

export type SqlDraft = DraftOf<
  'sql',
  {
    credential: string;
    /** The statement (stored as `query`). */
    sql: string;
    /** Its parameters ($1… or ?), one per row (the name unused). */
    params: Row[];
    /** `params` stored as one expression giving the array ('' when a list of rows). */
    paramsExpr: string;
    maxRows: string;
    timeoutMs: string;
  }
>;

export const sqlForm: StepForm<SqlDraft> = {
  type: 'sql',
  label: 'SQL query',
  description: 'Run a statement on PostgreSQL or MySQL',
  icon: '▤',
  keys: ['credential', 'query', 'params', 'maxRows', 'timeoutMs'],
  start: () => ({ sql: 'select * from orders where id = $1', params: [row('', '')] }),
  read(step) {
    const params = step.params;
    return {
      credential: typeof step.credential === 'string' ? step.credential : '',
      sql: typeof step.query === 'string' ? step.query : '',
      params: Array.isArray(params) ? params.map((p) => row('', valueToText(p))) : [],
      paramsExpr: typeof params === 'string' ? params : '',
      maxRows: step.maxRows === undefined ? '' : String(step.maxRows),
      timeoutMs: step.timeoutMs === undefined ? '' : String(step.timeoutMs),
    };
  },
  summary: (d) => firstLine(d.sql) || 'No statement yet',
  write(d, step, at, problems) {
    if (d.credential === '')
      problems.push({ field: `${at}/credential`, message: 'needs a postgres or mysql credential' });
    else step.credential = d.credential;
    step.query = d.sql;
    if (d.sql.trim() === '') problems.push({ field: `${at}/query`, message: 'needs a statement' });
    else if (d.sql.includes('{{'))
      problems.push({
        field: `${at}/query`,
        message: 'is literal SQL and may not hold an expression: add a parameter and refer to it as $1 or ?',
      });
    if (d.paramsExpr.trim() !== '') step.params = d.paramsExpr;
    else if (d.params.length > 0) step.params = d.params.map((p) => p.value);
    const maxRows = numberish(d.maxRows);
    if (maxRows !== undefined) step.maxRows = maxRows;
    const timeout = numberish(d.timeoutMs);
    if (timeout !== undefined) step.timeoutMs = timeout;
  },
};

/** How the statement refers to parameter `i` (0-based) in the credential's dialect. */
export function placeholder(type: string | undefined, i: number): string {
  if (type === 'mysql') return `? (${i + 1})`;
  if (type === 'postgres') return `$${i + 1}`;
  return `Parameter ${i + 1}`;
}
