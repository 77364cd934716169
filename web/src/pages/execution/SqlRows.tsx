/**
 * An `sql` step's rows (SPEC 7e output `{rows, rowCount, truncated}`) as a table: one column per
 * field the rows have, in the order they first appear; text as it is, null marked, other JSON as
 * JSON. The first MAX_SHOWN rows; all of them are in the Output tab.
 */
import { short } from '../../lib/format';
import { TableWrap } from '../../components/TableWrap';

const MAX_SHOWN = 200;

interface SqlOutput {
  rows: Record<string, unknown>[];
  rowCount?: number;
  truncated?: boolean;
}

/** The output when it is an sql step's, else undefined. */
export function sqlOutput(output: unknown): SqlOutput | undefined {
  if (output === null || typeof output !== 'object') return undefined;
  const rows = (output as { rows?: unknown }).rows;
  if (!Array.isArray(rows)) return undefined;
  return output as SqlOutput;
}

export function SqlRows({ output, name }: { output: SqlOutput; name: string }) {
  const rows = output.rows.filter((r): r is Record<string, unknown> => r !== null && typeof r === 'object');
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const r of rows.slice(0, MAX_SHOWN))
    for (const k of Object.keys(r))
      if (!seen.has(k)) {
        seen.add(k);
        columns.push(k);
      }
  const count = output.rowCount ?? rows.length;
  const summary =
    rows.length === 0
      ? `No rows returned${count > 0 ? `; ${count} row${count === 1 ? '' : 's'} affected` : ''}.`
      : `${rows.length} row${rows.length === 1 ? '' : 's'}${output.truncated ? ' — more were there: the step read at most this many (maxRows)' : ''}${rows.length > MAX_SHOWN ? `; the first ${MAX_SHOWN} are shown` : ''}.`;
  return (
    <div className="sql-rows" data-testid="sql-rows">
      <p className="small">{summary}</p>
      {rows.length > 0 && (
        <TableWrap label={`Rows of ${name}`}>
          <table className="data-table">
            <caption className="visually-hidden">Rows of {name}</caption>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th key={c} scope="col">
                    <code>{c}</code>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.slice(0, MAX_SHOWN).map((r, i) => (
                // Rows have no key of their own; their order is the result's.
                // biome-ignore lint/suspicious/noArrayIndexKey: a result's rows are not reordered
                <tr key={i}>
                  {columns.map((c) => (
                    <td key={c} className="value-cell">
                      <Cell value={r[c]} />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </div>
  );
}

function Cell({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span className="muted">null</span>;
  if (typeof value === 'string') return <>{value}</>;
  return <>{short(value, 200)}</>;
}
