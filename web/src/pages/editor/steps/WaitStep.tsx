/** `wait` (SPEC 7b, 7g): for a number of seconds, until a time, for a call, or for an event. */
import { useEffect, useId, useState } from 'react';
import { api, qs } from '../../../api';
import { ReferenceSelect } from '../../../components/ReferenceSelect';
import type { WaitDraft } from '../../../lib/steps/wait';
import type { Page, Workflow } from '../../../types';
import { Expr, problemAt, type Props } from './shared';

const KINDS: [WaitDraft['waitBy'], string][] = [
  ['seconds', 'for a number of seconds'],
  ['until', 'until a time'],
  ['call', 'for a call to its resume URL'],
  ['event', 'for an event: another webhook workflow’s request'],
];

export function WaitFields(props: Props<WaitDraft>) {
  const id = useId();
  const { step, onChange } = props;
  return (
    <>
      <fieldset className="rows">
        <legend className="label">Wait</legend>
        {KINDS.map(([kind, text]) => (
          <label key={kind} className="check">
            <input
              type="radio"
              name={`${id}-by`}
              checked={step.waitBy === kind}
              onChange={() => onChange({ waitBy: kind })}
            />
            {text}
          </label>
        ))}
      </fieldset>
      {step.waitBy === 'seconds' && <Expr {...props} k="seconds" title="Seconds" placeholder="60" />}
      {step.waitBy === 'until' && (
        <Expr
          {...props}
          k="until"
          title="Until (ISO-8601 time, at most 30 days ahead)"
          placeholder="{{ body.remindAt }}"
        />
      )}
      {step.waitBy === 'event' && <EventFields {...props} />}
      {(step.waitBy === 'call' || step.waitBy === 'event') && (
        <Expr
          {...props}
          k="timeoutSeconds"
          title="Timeout in seconds (default 86 400: a day)"
          placeholder="86400"
        />
      )}
      <p className="help">
        {step.waitBy === 'call' ? (
          <>
            The first call to <code>{'{{ $execution.resumeUrl }}'}</code> — hand it out in a step before this
            one — resumes the run, with that call's request as this step's output; a second call is refused.
            After the timeout the output is <code>{'{"timedOut": true}'}</code>.
          </>
        ) : step.waitBy === 'event' ? (
          <>
            The first production request of that workflow whose match gives this value resumes the run, with
            that request as this step's output; after the timeout the output is{' '}
            <code>{'{"timedOut": true}'}</code>.
          </>
        ) : (
          "The execution waits without holding a worker, then goes on with this step's input."
        )}
      </p>
    </>
  );
}

/** The webhook workflow waited on, the match on its requests, and the value it must give. */
function EventFields(props: Props<WaitDraft>) {
  const { step, onChange, at, problems } = props;
  const [workflows, setWorkflows] = useState<[string, string][] | null>(null);
  useEffect(() => {
    api<Page<Workflow>>('GET', `/workflows${qs({ limit: 100 })}`).then(
      (p) =>
        setWorkflows(
          p.items
            .filter((w) => (w.trigger as { type?: string }).type !== 'schedule')
            .map((w) => [w.id, w.name]),
        ),
      () => setWorkflows([]),
    );
  }, []);
  return (
    <>
      <ReferenceSelect
        label="Webhook workflow"
        value={step.workflowId}
        onChange={(workflowId) => onChange({ workflowId })}
        field={`${at}/workflowId`}
        error={problemAt(problems, `${at}/workflowId`)}
        options={workflows}
        unknownLabel="Unknown workflow"
        help="Its production requests are matched (it runs them as usual too)."
      />
      {/* Evaluated on that workflow's request, not in this run: no preview from this run's data. */}
      <Expr
        {...props}
        k="match"
        title="Match (an expression on that workflow's request)"
        placeholder="{{ body.data.object.id }}"
        fields={[]}
      />
      <Expr {...props} k="equals" title="Equals (this run's value)" placeholder="{{ $trigger.body.id }}" />
    </>
  );
}
