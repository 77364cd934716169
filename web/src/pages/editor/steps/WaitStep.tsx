/** `wait` (SPEC 7b): for a number of seconds, or until a time. */
import { useId } from 'react';
import type { WaitDraft } from '../../../lib/steps/wait';
import { Expr, type Props } from './shared';

export function WaitFields(props: Props<WaitDraft>) {
  const id = useId();
  const { step, onChange } = props;
  return (
    <>
      <fieldset className="rows">
        <legend className="label">Wait</legend>
        <label className="check">
          <input
            type="radio"
            name={`${id}-by`}
            checked={step.waitBy === 'seconds'}
            onChange={() => onChange({ waitBy: 'seconds' })}
          />
          for a number of seconds
        </label>
        <label className="check">
          <input
            type="radio"
            name={`${id}-by`}
            checked={step.waitBy === 'until'}
            onChange={() => onChange({ waitBy: 'until' })}
          />
          until a time
        </label>
      </fieldset>
      {step.waitBy === 'seconds' ? (
        <Expr {...props} k="seconds" title="Seconds" placeholder="60" />
      ) : (
        <Expr
          {...props}
          k="until"
          title="Until (ISO-8601 time, at most 30 days ahead)"
          placeholder="{{ body.remindAt }}"
        />
      )}
      <p className="help">
        The execution waits without holding a worker, then goes on with this step's input.
      </p>
    </>
  );
}
