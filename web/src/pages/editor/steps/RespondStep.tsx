/** `respond`: the status, headers and body of the webhook's answer (response mode "From a Respond step"). */
import type { RespondDraft } from '../../../lib/steps/respond';
import { textToBody } from '../../../lib/steps/values';
import { ROWS, Rows } from './Rows';
import { Expr, type Props } from './shared';

export function RespondFields(props: Props<RespondDraft>) {
  const { step, at, onChange, context, responseMode } = props;
  return (
    <>
      {responseMode !== 'respondStep' && (
        <p className="notice small">
          The trigger's response is not set to "From a Respond step", so this answer is not sent. Change it
          under Webhook trigger → Response.
        </p>
      )}
      <Expr {...props} k="status" title="Status" placeholder="200" />
      <Rows
        {...ROWS.headers}
        rows={step.headers}
        onChange={(headers) => onChange({ headers })}
        context={context}
        field={`${at}/headers`}
      />
      <Expr
        {...props}
        k="body"
        title="Body (JSON or text; empty sends the input)"
        multiline
        placeholder='{"ok": true}'
        toValue={textToBody}
      />
    </>
  );
}
