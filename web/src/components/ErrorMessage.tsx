import { useEffect, useRef } from 'react';
import type { ApiError } from '../api';
import { fieldLabel } from '../lib/saveErrors';
import { Link } from '../router';

/**
 * The message, with the other workflow of a path conflict named as a link to it, not by id
 * (the server says `Workflow "Orders" (<id>) is already active on …`).
 */
function Message({ error }: { error: ApiError }) {
  const other = error.conflictingWorkflow;
  const quoted = other && `"${other.name}" (${other.id})`;
  const at = quoted ? error.message.indexOf(quoted) : -1;
  if (!other || at === -1) return <>{error.message}</>;
  return (
    <>
      {error.message.slice(0, at)}
      <Link to={`/workflows/${encodeURIComponent(other.id)}`}>{other.name}</Link>
      {error.message.slice(at + quoted!.length)}
    </>
  );
}

/**
 * An API error as sentences: what happened, what to do (the hint), and which fields. With
 * `onField`, each field is a link to it (the editor puts the problems at their fields), named with
 * `body`'s step names. With `takeFocus`, the summary is focused and brought into view when it
 * appears (a failed save: the user's next move is in it).
 */
export function ErrorMessage({
  error,
  title,
  onField,
  body,
  takeFocus,
}: {
  error: ApiError | null | undefined;
  title?: string;
  onField?: (field: string) => void;
  body?: unknown;
  takeFocus?: boolean;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const shown = Boolean(error);
  useEffect(() => {
    if (!takeFocus || !shown || !ref.current) return;
    ref.current.focus({ preventScroll: true });
    ref.current.scrollIntoView({ block: 'nearest' });
  }, [takeFocus, shown]);
  if (!error) return null;
  return (
    <div className="error" role="alert" ref={ref} tabIndex={takeFocus ? -1 : undefined}>
      {title && <strong className="error-title">{title}</strong>}
      <p className="error-message">
        {error.fields.length > 0 ? 'Some fields need fixing.' : <Message error={error} />}
      </p>
      {error.fields.length > 0 && (
        <ul className="error-fields">
          {error.fields.map((f) => (
            <li key={`${f.field}:${f.message}`}>
              {onField ? (
                <a
                  href={`#field${f.field}`}
                  className="error-field-link"
                  onClick={(event) => {
                    event.preventDefault();
                    onField(f.field);
                  }}
                >
                  {fieldLabel(f.field, body)}
                </a>
              ) : (
                <strong>{fieldLabel(f.field, body)}</strong>
              )}{' '}
              {f.message}
            </li>
          ))}
        </ul>
      )}
      {error.hint && (
        <p className="error-hint">
          <strong>What to do:</strong> {error.hint}
        </p>
      )}
    </div>
  );
}
