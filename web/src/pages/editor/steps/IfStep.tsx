/** `if` (SPEC 7b): a condition, and its Then and Else lists (their steps are lanes of the flow). */
import { useId } from 'react';
import { Branch, Expr, type Props } from './shared';

export function IfFields(props: Props) {
  const id = useId();
  const { step, at, onChange, renderList, result } = props;
  const taken = (b: 'then' | 'else') => (result?.branch === undefined ? undefined : result.branch === b);
  return (
    <>
      <Expr {...props} k="condition" title="Condition" placeholder="{{ body.amount > 100 }}" />
      <div className="branches">
        <Branch id={`${id}-then`} title="Then (condition true)" taken={taken('then')}>
          {renderList(step.thenSteps, `${at}/then`, `Then of ${props.label}`, (thenSteps) =>
            onChange({ thenSteps }),
          )}
        </Branch>
        <Branch id={`${id}-else`} title="Else (false or nothing)" taken={taken('else')}>
          {renderList(step.elseSteps, `${at}/else`, `Else of ${props.label}`, (elseSteps) =>
            onChange({ elseSteps }),
          )}
        </Branch>
      </div>
    </>
  );
}
