import { flattenValue } from '../lib/flatten';
import { short, typeOf } from '../lib/format';
import { TableWrap } from './TableWrap';

/** A JSON value as a table of its leaf fields: path, value, type. */
export function FieldTable({ value, caption }: { value: unknown; caption: string }) {
  const rows = flattenValue(value);
  if (rows.length === 0) return <p className="muted">No fields.</p>;
  return (
    <TableWrap label={caption}>
      <table className="data-table field-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Value</th>
            <th scope="col" className="type-col">
              Type
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.path}>
              <th scope="row">
                <code>{row.path}</code>
              </th>
              <td className="value-cell">
                {typeof row.value === 'string' ? row.value : short(row.value, 200)}
              </td>
              <td className="muted small type-col">{typeOf(row.value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
