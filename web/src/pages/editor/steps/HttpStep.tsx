/** `http` (SPEC 7c): method, URL, credential, headers, query, body, timeout, fail on error, retry. */
import { useId } from 'react';
import { type HttpDraft, httpUrlProblem } from '../../../lib/steps/http';
import { textToBody } from '../../../lib/steps/values';
import { CredentialPicker } from './CredentialPicker';
import { RetryFields } from './RetryFields';
import { ROWS, Rows } from './Rows';
import { Expr, type Props, problemAt } from './shared';

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

export function HttpFields(props: Props<HttpDraft>) {
  const id = useId();
  const { step, at, onChange, problems, context } = props;
  return (
    <>
      <div className="field">
        <label htmlFor={`${id}-method`} className="label">
          Method
        </label>
        <select
          id={`${id}-method`}
          className="input"
          value={step.method}
          onChange={(e) => onChange({ method: e.target.value })}
        >
          {HTTP_METHODS.map((m) => (
            <option key={m}>{m}</option>
          ))}
        </select>
      </div>
      <Expr
        {...props}
        k="url"
        title="URL"
        placeholder="https://example.com/api"
        error={httpUrlProblem(step.url, true)}
      />
      <CredentialPicker
        value={step.credential}
        onChange={(credential) => onChange({ credential })}
        field={`${at}/credential`}
        error={problemAt(problems, `${at}/credential`)}
      />
      <Rows
        {...ROWS.headers}
        rows={step.headers}
        onChange={(headers) => onChange({ headers })}
        context={context}
        field={`${at}/headers`}
      />
      <Rows
        {...ROWS.query}
        rows={step.query}
        onChange={(query) => onChange({ query })}
        context={context}
        field={`${at}/query`}
      />
      {step.method !== 'GET' && step.method !== 'HEAD' && (
        <Expr
          {...props}
          k="body"
          title="Body (JSON or text)"
          multiline
          placeholder='{"name": "{{ body.param1 }}"}'
          toValue={textToBody}
        />
      )}
      <Expr {...props} k="timeoutMs" title="Timeout (ms)" placeholder="30000" />
      <label className="check">
        <input
          type="checkbox"
          checked={step.failOnError}
          onChange={(e) => onChange({ failOnError: e.target.checked })}
        />
        Fail the run when the answer is not 2xx
      </label>
      <RetryFields step={step} at={at} onChange={onChange} problems={problems} />
    </>
  );
}
