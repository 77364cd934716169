import type { ReactNode } from 'react';
import type { FieldProblem } from '../../api';
import { Tabs } from '../../components/Tabs';
import { STEP_TYPES, type StepDraft } from '../../lib/draft';
import type { Found } from '../../lib/lanes';
import { useCan } from '../../lib/role';
import type { SimResult } from '../../lib/simulate';
import type { ResponseMode } from '../../types';
import { StepLastOutput } from './StepRunResult';
import { type StepContext, StepSettings } from './StepSettings';
import type { EditorPanel } from './useEditorPanel';

/** A side panel's (or sheet's) heading; on a sheet, with the button that goes back to the steps. */
export function PanelHead({
  id,
  onBack,
  children,
}: {
  id: string;
  onBack: (() => void) | undefined;
  children: ReactNode;
}) {
  return (
    <div className="panel-head">
      <h2 id={id} tabIndex={-1}>
        {children}
      </h2>
      {onBack && (
        <button type="button" className="button" onClick={onBack}>
          Back to the steps
        </button>
      )}
    </div>
  );
}

/** The selected step's panel: its settings, and its last test output, as tabs. */
export function StepPanel({
  found,
  panel,
  headingId,
  context,
  result,
  problems,
  responseMode,
}: {
  found: Found;
  panel: EditorPanel;
  headingId: string;
  context: StepContext;
  result: SimResult | undefined;
  problems: FieldProblem[];
  responseMode: ResponseMode;
}) {
  const canEdit = useCan('editor');
  const { step, list, index, at } = found;
  return (
    <>
      <PanelHead id={panel.stepTitle} onBack={panel.wide ? undefined : panel.closeSheet}>
        {STEP_TYPES.find((t) => t.type === step.type)?.label ?? step.type}
        <span className="muted"> · {step.name || `step ${index + 1}`}</span>
      </PanelHead>
      <Tabs
        label={`Step ${step.name}`}
        selected={panel.stepTab}
        onSelect={(t) => panel.setStepTab(t as 'settings' | 'output')}
        tabs={[
          {
            id: 'settings',
            label: 'Settings',
            content: (
              <fieldset className="read-only-fields" disabled={!canEdit}>
                <StepSettings
                  key={step.key}
                  headingId={`${headingId}-step-settings`}
                  step={step}
                  at={at}
                  index={index}
                  count={list.length}
                  place={found.place}
                  onChange={(patch) =>
                    panel.setList(
                      list,
                      list.map((s, i) => (i === index ? ({ ...s, ...patch } as StepDraft) : s)),
                    )
                  }
                  onMove={(by) => {
                    const next = [...list];
                    const [moved] = next.splice(index, 1);
                    next.splice(index + by, 0, moved!);
                    panel.setList(list, next);
                  }}
                  onRemove={() => panel.removeStep(step.key)}
                  context={context}
                  result={result}
                  problems={problems.filter((p) => p.field === at || p.field.startsWith(`${at}/`))}
                  responseMode={responseMode}
                />
              </fieldset>
            ),
          },
          {
            id: 'output',
            label: 'Last test output',
            content: <StepLastOutput result={result} label={step.name} />,
          },
        ]}
      />
    </>
  );
}
