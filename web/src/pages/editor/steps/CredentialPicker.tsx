import { useEffect, useId, useState } from 'react';
import { api, qs } from '../../../api';
import { type Credential, credentialType } from '../../../lib/credentials';
import { Link } from '../../../router';
import type { Page } from '../../../types';

/** One request for every http step on the page (and again after a page change). */
let pending: Promise<Credential[]> | undefined;
function loadCredentials(): Promise<Credential[]> {
  pending ??= api<Page<Credential>>('GET', `/credentials${qs({ limit: 100 })}`).then(
    (p) => p.items,
    (err) => {
      pending = undefined;
      throw err;
    },
  );
  return pending;
}

/** The http step's credential (SPEC 7c): chosen by name, saved as its id; the value is added at run time. */
export function CredentialPicker({
  value,
  onChange,
  field,
  error,
}: {
  value: string;
  onChange: (id: string) => void;
  field: string;
  error?: string;
}) {
  const id = useId();
  const [items, setItems] = useState<Credential[] | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    pending = undefined;
    loadCredentials().then(setItems, () => setFailed(true));
  }, []);
  const known = items?.some((c) => c.id === value) ?? true;
  return (
    <div className="field">
      <label htmlFor={`${id}-credential`} className="label">
        Credential
      </label>
      <select
        id={`${id}-credential`}
        className={`input${error ? ' invalid' : ''}`}
        value={value}
        data-field={field}
        aria-describedby={`${id}-help${error ? ` ${id}-error` : ''}`}
        aria-invalid={error ? true : undefined}
        onChange={(e) => onChange(e.target.value)}
      >
        <option value="">None</option>
        {!known && <option value={value}>Unknown credential {value}</option>}
        {items?.map((c) => (
          <option key={c.id} value={c.id}>
            {c.name} ({credentialType(c.type)?.label ?? c.type})
          </option>
        ))}
      </select>
      {error && (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      )}
      <p id={`${id}-help`} className="help">
        {failed ? 'The credentials could not be loaded. ' : ''}Its secret is added when the step runs and
        shows as <code>***</code> in executions. <Link to="/credentials">Manage credentials</Link>
      </p>
    </div>
  );
}
