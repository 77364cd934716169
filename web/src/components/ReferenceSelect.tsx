import type { ReactNode } from 'react';
import { useId } from 'react';

/**
 * A select of something saved by id (a credential, an error workflow): "None", the options once
 * loaded, and the current id as "Unknown …" while it is not among them (deleted since, or not
 * loaded), so the form never shows another value than the one it will save. Its error (the
 * server's, at `field`) and help text under it.
 */
export function ReferenceSelect({
  label,
  value,
  onChange,
  field,
  options,
  unknownLabel,
  error,
  help,
}: {
  label: string;
  value: string;
  onChange: (id: string) => void;
  /** The JSON pointer the server names in its errors (data-field, to focus it). */
  field: string;
  /** [id, text]; null while loading. */
  options: [string, string][] | null;
  /** The option shown for an id not among the options: `${unknownLabel} ${id}`. */
  unknownLabel: string;
  error?: string | undefined;
  help: ReactNode;
}) {
  const id = useId();
  const known = options?.some(([option]) => option === value) ?? true;
  return (
    <div className="field">
      <label htmlFor={`${id}-select`} className="label">
        {label}
      </label>
      <select
        id={`${id}-select`}
        className={`input${error ? ' invalid' : ''}`}
        value={value}
        data-field={field}
        aria-invalid={error ? true : undefined}
        aria-describedby={`${id}-help${error ? ` ${id}-error` : ''}`}
        onChange={(e) => onChange(e.target.value)}
      >
        <option value="">None</option>
        {value && !known && (
          <option value={value}>
            {unknownLabel} {value}
          </option>
        )}
        {options?.map(([option, text]) => (
          <option key={option} value={option}>
            {text}
          </option>
        ))}
      </select>
      {error && (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      )}
      <p id={`${id}-help`} className="help">
        {help}
      </p>
    </div>
  );
}
