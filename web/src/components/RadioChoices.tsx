import { useId } from 'react';

/** One choice of a few, as radios on one line with a legend, and a line saying what the chosen one means. */
export function RadioChoices<T extends string>({
  legend,
  options,
  value,
  help,
  onChange,
}: {
  legend: string;
  options: readonly { value: T; label: string }[];
  value: T;
  /** What the chosen option does. */
  help: string | undefined;
  onChange: (value: T) => void;
}) {
  const id = useId();
  return (
    <fieldset className="field">
      <legend className="label">{legend}</legend>
      <div className="choices">
        {options.map((o) => (
          <label key={o.value} className="check">
            <input
              type="radio"
              name={`${id}-choice`}
              value={o.value}
              checked={value === o.value}
              aria-describedby={help ? `${id}-help` : undefined}
              onChange={() => onChange(o.value)}
            />
            {o.label}
          </label>
        ))}
      </div>
      {help && (
        <p id={`${id}-help`} className="help">
          {help}
        </p>
      )}
    </fieldset>
  );
}
