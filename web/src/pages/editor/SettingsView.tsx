import type { FieldProblem } from '../../api';
import type { PickerField } from '../../components/FieldPicker';
import type { Draft } from '../../lib/draft';
import { useCan } from '../../lib/role';
import { HealthPanel } from './HealthPanel';
import { RejectionsPanel } from './RejectionsPanel';
import { SettingsPanel } from './SettingsPanel';
import type { StepContext } from './StepSettings';
import { TestsPanel } from './TestsPanel';

/** The workflow's Settings view: its settings, trigger health alerts, workflow tests and refused calls (a webhook's). */
export function SettingsView({
  workflowId,
  draft,
  onChange,
  fields,
  problems,
  expressionContext,
}: {
  workflowId: string;
  draft: Draft;
  onChange: (draft: Draft) => void;
  /** The learned fields a search can index. */
  fields: PickerField[];
  problems: FieldProblem[];
  /** What settings expressions see (the concurrency key): the trigger item, as the first step does. */
  expressionContext: StepContext;
}) {
  const canEdit = useCan('editor');
  // A schedule has no calls to refuse and no trigger health alerts.
  const isSchedule = draft.trigger.type === 'schedule';
  return (
    <div className="settings-view">
      <fieldset className="read-only-fields" disabled={!canEdit}>
        <SettingsPanel
          workflowId={workflowId}
          errorWorkflowId={draft.errorWorkflowId}
          onChange={(errorWorkflowId) => onChange({ ...draft, errorWorkflowId })}
          searchFields={draft.searchFields}
          onSearchFieldsChange={(searchFields) => onChange({ ...draft, searchFields })}
          fields={fields}
          problems={problems}
          concurrency={draft.concurrency}
          onConcurrencyChange={(concurrency) => onChange({ ...draft, concurrency })}
          expressionFields={expressionContext.fields}
          scope={expressionContext.scope}
        />
      </fieldset>
      {!isSchedule && (
        <fieldset className="read-only-fields" disabled={!canEdit}>
          <HealthPanel
            workflowId={workflowId}
            alerts={draft.trigger}
            onChange={(patch) => onChange({ ...draft, trigger: { ...draft.trigger, ...patch } })}
            problems={problems}
          />
        </fieldset>
      )}
      <TestsPanel workflowId={workflowId} />
      {!isSchedule && <RejectionsPanel workflowId={workflowId} />}
    </div>
  );
}
