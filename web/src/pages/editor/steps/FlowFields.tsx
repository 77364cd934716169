/**
 * The forms of the SPEC 7b step types, one module each (IfStep, SwitchStep, ForEachStep, CodeStep,
 * WaitStep; `fail` is one expression). A branch or loop's step lists are the flow's lanes; in the
 * form, `renderList` names each list with its size.
 */
import { CodeFields } from './CodeStep';
import { ForEachFields } from './ForEachStep';
import { IfFields } from './IfStep';
import { Expr, type Props } from './shared';
import { SwitchFields } from './SwitchStep';
import { WaitFields } from './WaitStep';

export { problemAt, type RenderList } from './shared';

export const FLOW_FORM_TYPES = new Set(['if', 'switch', 'forEach', 'code', 'wait', 'fail']);

/** Fields of these types that show their problems in place (the rest are listed below the step). */
export const FLOW_INLINE_FIELDS = ['items', 'value', 'source', 'seconds', 'until', 'message'];

export function FlowFields(props: Props) {
  switch (props.step.type) {
    case 'if':
      return <IfFields {...props} />;
    case 'switch':
      return <SwitchFields {...props} />;
    case 'forEach':
      return <ForEachFields {...props} />;
    case 'code':
      return <CodeFields {...props} />;
    case 'wait':
      return <WaitFields {...props} />;
    case 'fail':
      return (
        <Expr
          {...props}
          k="message"
          title="Message"
          placeholder="Unknown event {{ headers.`x-github-event` }}"
        />
      );
    default:
      return null;
  }
}
