/** `set`: named fields, each an expression (a picked field names an empty row), and Keep input. */
import type { SetDraft } from '../../../lib/steps/set';
import { ROWS, Rows } from './Rows';
import type { Props } from './shared';

export function SetFields({ step, at, onChange, context }: Props<SetDraft>) {
  return (
    <>
      <Rows
        {...ROWS.fields}
        rows={step.fields}
        onChange={(fields) => onChange({ fields })}
        context={context}
        field={`${at}/fields`}
        autoName
      />
      <label className="check">
        <input
          type="checkbox"
          checked={step.keepInput}
          onChange={(e) => onChange({ keepInput: e.target.checked })}
        />
        Keep the input's other fields
      </label>
    </>
  );
}
