import type { ApiError } from '../api';

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
];

export function fieldLabel(field: string): string {
  for (const [pattern, label] of FIELD_NAMES) {
    const m = pattern.exec(field);
    if (m)
      return m[1] !== undefined ? `${label} ${Number(m[1]) + 1}${field.slice(m[0].length) || ''}` : label;
  }
  return field;
}

/** An API error as sentences: what happened, what to do (the hint), and which fields. */
export function ErrorMessage({ error, title }: { error: ApiError | null | undefined; title?: string }) {
  if (!error) return null;
  return (
    <div className="error" role="alert">
      {title && <strong className="error-title">{title}</strong>}
      <p className="error-message">{error.fields.length > 0 ? 'Some fields need fixing.' : error.message}</p>
      {error.fields.length > 0 && (
        <ul className="error-fields">
          {error.fields.map((f) => (
            <li key={`${f.field}:${f.message}`}>
              <strong>{fieldLabel(f.field)}</strong> {f.message}
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
