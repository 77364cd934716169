/** `store` (SPEC 7f): the operation, the key, and what the operation takes, each with the field picker. */
import { useId } from 'react';
import { STORE_OPS, type StoreDraft, type StoreOp, storeTakes } from '../../../lib/steps/store';
import { textToBody } from '../../../lib/steps/values';
import { Expr, type Props } from './shared';

const OP_LABELS: Record<StoreOp, string> = {
  get: 'Get: read the value (output {found, value})',
  set: 'Set: write the value (output {value})',
  delete: 'Delete the entry (output {deleted})',
  increment: 'Increment: add to a number, atomically (output {value})',
  setIfAbsent: 'Set if absent: write only a new key, atomically (output {set, value})',
};

export function StoreFields(props: Props<StoreDraft>) {
  const id = useId();
  const { step, onChange } = props;
  const takes = storeTakes(step.op);
  return (
    <>
      <div className="field">
        <label htmlFor={`${id}-op`} className="label">
          Operation
        </label>
        <select
          id={`${id}-op`}
          className="input"
          value={step.op}
          onChange={(e) => onChange({ op: e.target.value as StoreOp })}
        >
          {STORE_OPS.map((op) => (
            <option key={op} value={op}>
              {OP_LABELS[op]}
            </option>
          ))}
        </select>
      </div>
      <Expr {...props} k="entryKey" title="Key" placeholder="order:{{ body.id }}" field="key" />
      {takes.value && (
        <Expr
          {...props}
          k="value"
          title="Value (JSON or text)"
          multiline
          placeholder='{"status": "{{ body.status }}"}'
          toValue={textToBody}
        />
      )}
      {takes.by && <Expr {...props} k="by" title="By (blank: 1)" placeholder="1" />}
      {takes.ttlSeconds && <Expr {...props} k="ttlSeconds" title="Expires after (seconds; blank: never)" />}
      <div className="field">
        <label htmlFor={`${id}-scope`} className="label">
          Scope
        </label>
        <select
          id={`${id}-scope`}
          className="input"
          value={step.scope}
          onChange={(e) => onChange({ scope: e.target.value as StoreDraft['scope'] })}
        >
          <option value="workflow">This workflow's entries</option>
          <option value="global">Global: shared by every workflow</option>
        </select>
      </div>
      <p className="help">
        Test runs read and write the same store as production. Entries are listed on the Data page.
      </p>
    </>
  );
}
