/**
 * `workflow` (SPEC 7f): the target chosen from the other workflows, its input (JSON or text, with
 * the field picker: this workflow's fields, and the members of the input the target was seen to
 * take — from its newest test event or its learned schema), and whether to wait for its result.
 */
import { useEffect, useState } from 'react';
import { api, qs } from '../../../api';
import type { PickerField } from '../../../components/FieldPicker';
import { ReferenceSelect } from '../../../components/ReferenceSelect';
import { type InputMember, inputMembers, type WorkflowDraft } from '../../../lib/steps/workflow';
import { textToBody } from '../../../lib/steps/values';
import { Link } from '../../../router';
import type { LearnedSchema, Page, TestEvent, Workflow } from '../../../types';
import { Expr, type Props, problemAt } from './shared';

/** What the target was seen to take, loaded when the target changes. */
function useTargetInput(workflowId: string): InputMember[] {
  const [members, setMembers] = useState<InputMember[]>([]);
  useEffect(() => {
    setMembers([]);
    if (!workflowId) return;
    let cancelled = false;
    const base = `/workflows/${encodeURIComponent(workflowId)}`;
    Promise.all([
      api<LearnedSchema>('GET', `${base}/schema`).catch(() => null),
      api<Page<TestEvent>>('GET', `${base}/test-events${qs({ limit: 1 })}`).catch(() => null),
    ]).then(([schema, events]) => {
      if (!cancelled) setMembers(inputMembers(schema?.fields ?? [], events?.items[0]?.item.body));
    });
    return () => {
      cancelled = true;
    };
  }, [workflowId]);
  return members;
}

export function WorkflowFields(props: Props<WorkflowDraft>) {
  const { step, at, onChange, problems, context } = props;
  const [others, setOthers] = useState<Workflow[] | null>(null);
  useEffect(() => {
    api<Page<Workflow>>('GET', `/workflows${qs({ limit: 100 })}`).then(
      (p) => setOthers(p.items.filter((w) => w.id !== context.workflowId)),
      () => setOthers([]),
    );
  }, [context.workflowId]);
  const target = others?.find((w) => w.id === step.workflowId);
  const members = useTargetInput(step.workflowId);
  const group = `Input ${target?.name ?? 'the workflow'} takes`;
  const fields: PickerField[] = [
    ...members.map((m) => ({
      group,
      label: m.name,
      insert: `body.${m.name}`,
      text: `${JSON.stringify(m.name)}: ${JSON.stringify(m.example ?? null)}`,
      type: m.type,
      example: m.example,
    })),
    ...context.fields,
  ];
  return (
    <>
      <ReferenceSelect
        label="Workflow to run"
        value={step.workflowId}
        onChange={(workflowId) => onChange({ workflowId })}
        field={`${at}/workflowId`}
        error={problemAt(problems, `${at}/workflowId`)}
        options={others?.map((w) => [w.id, w.name]) ?? null}
        unknownLabel="Unknown workflow"
        help={
          <>
            It runs its published version (its draft in a test run), with the input as its <code>body</code>.{' '}
            {target && <Link to={`/workflows/${encodeURIComponent(target.id)}`}>Open it</Link>}
          </>
        }
      />
      <Expr
        {...props}
        k="input"
        title="Input (JSON or text)"
        multiline
        placeholder='{"orderId": "{{ body.id }}"}'
        toValue={textToBody}
        fields={fields}
      />
      {members.length > 0 && (
        <p className="help">
          The field picker lists what {target?.name ?? 'it'} takes: a choice inserts the member with the value
          it was last seen with, for you to replace.
        </p>
      )}
      {step.waitExpr === '' ? (
        <label className="check">
          <input type="checkbox" checked={step.wait} onChange={(e) => onChange({ wait: e.target.checked })} />
          Wait for its result (the output is its last step's; unchecked: only its execution id)
        </label>
      ) : (
        <Expr {...props} k="waitExpr" title="Wait (an expression giving true or false)" field="wait" />
      )}
    </>
  );
}
