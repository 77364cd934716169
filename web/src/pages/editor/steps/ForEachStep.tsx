/** `forEach` (SPEC 7b): the list to go through and the steps run per element. */
import { useId } from 'react';
import type { ForEachDraft } from '../../../lib/steps/flow';
import { Branch, Expr, type Props } from './shared';

export function ForEachFields(props: Props<ForEachDraft>) {
  const id = useId();
  const { step, at, onChange, renderList, label } = props;
  return (
    <>
      <Expr {...props} k="items" title="Items (a list)" placeholder="{{ body.lines }}" />
      <p className="help">
        The steps inside run once per element: <code>$item</code> is the element, <code>$index</code> its
        position (from 0), in expressions and in code steps alike, and <code>$</code> the element for the
        first step. The output is the list of each run's last output.
      </p>
      <Branch id={`${id}-loop`} title="For each element" taken={undefined}>
        {renderList(step.steps, `${at}/steps`, `the loop of ${label}`, (steps) => onChange({ steps }))}
      </Branch>
    </>
  );
}
