import { useEffect, useState } from 'react';
import { api, qs } from '../../../api';
import { ReferenceSelect } from '../../../components/ReferenceSelect';
import { type Credential, credentialType } from '../../../lib/credentials';
import { useCan } from '../../../lib/role';
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
  types,
  onType,
}: {
  value: string;
  onChange: (id: string) => void;
  field: string;
  error?: string;
  /** Only credentials of these types are offered (the types the step takes). */
  types?: readonly string[];
  /** Told the chosen credential's type once it is known (an `sql` step names its placeholders by it). */
  onType?: (type: string | undefined) => void;
}) {
  const [items, setItems] = useState<Credential[] | null>(null);
  const [failed, setFailed] = useState(false);
  // Credentials are the editors' (SPEC 11b): a viewer sees the step's credential by id only.
  const canEdit = useCan('editor');
  useEffect(() => {
    if (!canEdit) return;
    pending = undefined;
    loadCredentials().then(setItems, () => setFailed(true));
  }, [canEdit]);
  const type = items?.find((c) => c.id === value)?.type;
  useEffect(() => {
    onType?.(type);
  }, [type, onType]);
  const offered = types ? items?.filter((c) => types.includes(c.type)) : items;
  return (
    <ReferenceSelect
      label="Credential"
      value={value}
      onChange={onChange}
      field={field}
      error={error}
      options={offered?.map((c) => [c.id, `${c.name} (${credentialType(c.type)?.label ?? c.type})`]) ?? null}
      unknownLabel="Unknown credential"
      help={
        <>
          {failed ? 'The credentials could not be loaded. ' : ''}Its secret is added when the step runs and
          shows as <code>***</code> in executions.{' '}
          {canEdit && <Link to="/credentials">Manage credentials</Link>}
        </>
      }
    />
  );
}
