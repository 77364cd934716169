import { type InputHTMLAttributes, type ReactNode, useId } from 'react';

/**
 * A labelled input in the form layout (`.field`): `label` names it, `help` (when given) is shown
 * under it and describes it. Every other prop goes to the <input>.
 */
export function TextField({
  label,
  help,
  className = 'input',
  ...input
}: Omit<InputHTMLAttributes<HTMLInputElement>, 'id'> & { label: ReactNode; help?: ReactNode }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id} className="label">
        {label}
      </label>
      <input id={id} className={className} aria-describedby={help ? `${id}-help` : undefined} {...input} />
      {help && (
        <p id={`${id}-help`} className="help">
          {help}
        </p>
      )}
    </div>
  );
}
