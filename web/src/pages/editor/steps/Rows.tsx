/** A list of name–value rows (a set step's fields, headers, query parameters), each value an expression. */
import { useId } from 'react';
import { ExpressionInput } from '../../../components/ExpressionInput';
import type { Row } from '../../../lib/steps/types';
import { row } from '../../../lib/steps/values';
import type { StepContext } from './shared';

/** The last name in a picked path, as a field name: `body.param1` → `param1`. */
function suggestName(label: string): string {
  const last =
    label
      .replace(/\[\]$/, '')
      .split(/[.[\]"]+/)
      .filter(Boolean)
      .pop() ?? '';
  return /^[A-Za-z_][\w-]*$/.test(last) ? last : '';
}

/** What each list of name–value rows is called, by the step field that holds it. */
export const ROWS = {
  fields: { title: 'Fields', addLabel: 'Add field', nameLabel: 'Field name' },
  headers: { title: 'Headers', addLabel: 'Add header', nameLabel: 'Header' },
  query: { title: 'Query', addLabel: 'Add parameter', nameLabel: 'Parameter' },
} as const;

export function Rows({
  title,
  addLabel,
  nameLabel,
  rows,
  onChange,
  context,
  field,
  autoName,
}: {
  title: string;
  addLabel: string;
  nameLabel: string;
  rows: Row[];
  onChange: (rows: Row[]) => void;
  context: StepContext;
  /** JSON pointer of the object the rows make (`/steps/0/headers`): where `$secrets` may go, and error links. */
  field: string;
  /** Fill an empty name from the picked field. */
  autoName?: boolean;
}) {
  const id = useId();
  const set = (key: string, patch: Partial<Row>) =>
    onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  return (
    <fieldset className="rows">
      <legend className="label">{title}</legend>
      {rows.map((r, i) => (
        <div key={r.key} className="kv-row">
          <div className="field kv-name">
            <label htmlFor={`${id}-${r.key}`} className="label small">
              {nameLabel} {rows.length > 1 ? i + 1 : ''}
            </label>
            <input
              id={`${id}-${r.key}`}
              className="input mono"
              value={r.name}
              onChange={(e) => set(r.key, { name: e.target.value })}
            />
          </div>
          <div className="kv-value">
            <ExpressionInput
              label={`Value${r.name ? ` of ${r.name}` : rows.length > 1 ? ` ${i + 1}` : ''}`}
              value={r.value}
              onChange={(value, picked) =>
                set(
                  r.key,
                  autoName && picked && !r.name.trim()
                    ? { value, name: suggestName(picked.label) }
                    : { value },
                )
              }
              fields={context.fields}
              scope={context.scope}
              field={r.name ? `${field}/${r.name.replace(/~/g, '~0').replace(/\//g, '~1')}` : field}
            />
          </div>
          <button
            type="button"
            className="button small icon kv-remove"
            aria-label={`Remove ${r.name || `${nameLabel.toLowerCase()} ${i + 1}`}`}
            onClick={() => onChange(rows.filter((x) => x.key !== r.key))}
          >
            ✕
          </button>
        </div>
      ))}
      <button type="button" className="button small" onClick={() => onChange([...rows, row()])}>
        + {addLabel}
      </button>
    </fieldset>
  );
}
