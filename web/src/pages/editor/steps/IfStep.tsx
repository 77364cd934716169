/** `if` (SPEC 7b): a condition, and its Then and Else lists (their steps are lanes of the flow). */
import { useId } from 'react';
import type { IfDraft } from '../../../lib/steps/flow';
import { Branch, Expr, type Props } from './shared';

export function IfFields(props: Props<IfDraft>) {
  const id = useId();
  const { step, at, onChange, renderList, result } = props;
  const taken = (b: 'then' | 'else') => (result?.branch === undefined ? undefined : result.branch === b);
  return (
    <>
      <Expr {...props} k="condition" title="Condition" placeholder="{{ body.amount > 100 }}" />
      <div className="branches">
        <Branch id={`${id}-then`} title="Then (condition true)" taken={taken('then')}>
          {renderList(step.then, `${at}/then`, `Then of ${props.label}`, (then) => onChange({ then }))}
        </Branch>
        <Branch id={`${id}-else`} title="Else (false or nothing)" taken={taken('else')}>
          {renderList(step.else, `${at}/else`, `Else of ${props.label}`, (list) => onChange({ else: list }))}
        </Branch>
      </div>
    </>
  );
}
