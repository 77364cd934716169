import type { ApiError } from '../api';
import { Link } from '../router';

/** Readable names for the fields a validation error points at (`/trigger/path` → "Path"). */
const FIELD_NAMES: [RegExp, string][] = [
  [/^\/name$/, 'Name'],
  [/^\/trigger\/path$/, 'Path'],
  [/^\/trigger\/methods/, 'Methods'],
  [/^\/trigger\/auth/, 'Authentication'],
  [/^\/trigger\/response/, 'Response'],
  [/^\/trigger\/options/, 'Options'],
  [/^\/steps\/(\d+)/, 'Step'],
  [/^\/email$/, 'Email'],
  [/^\/password$/, 'Password'],
  [/^\/setupCode$/, 'Setup code'],
];

export function fieldLabel(field: string): string {
  for (const [pattern, label] of FIELD_NAMES) {
    const m = pattern.exec(field);
    if (!m) continue;
    const rest = field.slice(m[0].length).replace(/^\//, '').split('/').filter(Boolean).join(' › ');
    const head = m[1] !== undefined ? `${label} ${Number(m[1]) + 1}` : label;
    return rest ? `${head} › ${rest}` : head;
  }
  return field;
}

/**
 * The message, with the other workflow of a path conflict named as a link to it, not by id
 * (issue 17 #6): the server says `Workflow "Orders" (<id>) is already active on …`.
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
 * `onField`, each field is a link to it (the editor puts the problems at their fields).
 */
export function ErrorMessage({
  error,
  title,
  onField,
}: {
  error: ApiError | null | undefined;
  title?: string;
  onField?: (field: string) => void;
}) {
  if (!error) return null;
  return (
    <div className="error" role="alert">
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
                  {fieldLabel(f.field)}
                </a>
              ) : (
                <strong>{fieldLabel(f.field)}</strong>
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
