import { useCallback, useEffect, useId, useMemo, useState } from 'react';
import { ErrorMessage } from '../components/ErrorMessage';
import { Notice } from '../components/Notice';
import { Sheet } from '../components/Sheet';
import { Tabs } from '../components/Tabs';
import { allNames, normalizedPath, type TriggerDraft } from '../lib/draft';
import { savedNotice } from '../lib/publishing';
import { useCan } from '../lib/role';
import { staleness, stepRuns } from '../lib/testRun';
import { nextTickItem } from '../lib/schedule';
import { useTitle } from '../lib/title';
import { VariablesContext } from '../lib/variables';
import { Link } from '../router';
import type { TestEvent } from '../types';
import { EditorHeader, PathConflictWarning } from './editor/EditorHeader';
import { LastRunLine, TestBar } from './editor/LastRunLine';
import { SettingsView } from './editor/SettingsView';
import { StepFlow } from './editor/StepFlow';
import { StepPanel } from './editor/StepPanel';
import { TriggerCard } from './editor/TriggerCard';
import { TriggerDetails } from './editor/TriggerDetails';
import { useEditorPanel } from './editor/useEditorPanel';
import { useLeaveGuard } from './editor/useLeaveGuard';
import { usePublish } from './editor/usePublish';
import { useStepContext } from './editor/useStepContext';
import { useTestEvents } from './editor/useTestEvents';
import { useTestRun } from './editor/useTestRun';
import { useWorkflowDraft } from './editor/useWorkflowDraft';

/**
 * The workflow editor: the trigger and the steps as a flow of cards, the selected card's details
 * beside them (a sheet on a narrow screen), the workflow's settings as a second view. Its state
 * lives in hooks: the draft and Save, the leave guard, publishing, the test events and the last
 * test run.
 */
export function WorkflowEditor({ id }: { id: string }) {
  const headingId = useId();
  // A viewer reads the workflow: no Save, Publish, activation or testing, and its fields are read-only.
  const canEdit = useCan('editor');
  const d = useWorkflowDraft(id);
  const { saved, draft, payload, dirty } = d;
  useTitle(saved?.name ?? 'Workflow');
  const leaveGuard = useLeaveGuard(dirty, d.save);
  const publish = usePublish(id, d);
  const panel = useEditorPanel(headingId, draft, d.setDraft);
  /** What Listen or Replay saved first, said in the test panel where the user is looking. */
  const [testNote, setTestNote] = useState('');
  // A later save, publish or activation speaks in the header: the test panel's note is then old.
  useEffect(() => {
    if (d.status) setTestNote('');
  }, [d.status]);
  /** Saves pending edits before a test run; `here` says where the note of that save goes. */
  const saveBeforeTest = async (here: 'panel' | 'header') => {
    const r = await d.saveFirst();
    if (r?.savedNow && here === 'panel') {
      d.setStatus('');
      setTestNote(savedNotice(r.workflow));
    } else if (r) setTestNote('');
    return r !== null;
  };
  const testRun = useTestRun(id, (kind) => saveBeforeTest(kind === 'run' ? 'header' : 'panel'));
  const { follow } = testRun;
  const onCapture = useCallback(
    (e: TestEvent) => e.executionId && follow(e.executionId, 'capture'),
    [follow],
  );
  const test = useTestEvents(id, onCapture);

  const run = testRun.last?.execution;
  const stale = run && saved ? staleness(run.workflowVersion, saved.version, dirty) : undefined;
  const runs = useMemo(
    () => (run && payload ? stepRuns(payload.body.steps, run, stale) : {}),
    [run, payload, stale],
  );
  // A schedule has no captures: its steps are previewed with the item of its next tick.
  const scheduleItem = useMemo(
    () =>
      draft?.trigger.type === 'schedule'
        ? nextTickItem(draft.trigger.cron, draft.trigger.timezone, new Date())
        : undefined,
    [draft?.trigger.type, draft?.trigger.cron, draft?.trigger.timezone],
  );
  const item = test.selected?.item ?? scheduleItem;
  const ctx = useStepContext({
    workflowId: id,
    steps: payload?.body.steps,
    item,
    run,
    runs,
    learnedFields: test.schema?.fields ?? [],
    canEdit,
  });
  const names = useCallback(() => (draft ? allNames(draft.steps) : new Set<string>()), [draft]);

  if (d.loadError) {
    return (
      <div className="card">
        <h1>Workflow</h1>
        <ErrorMessage error={d.loadError} />
        <Link to="/">Back to the workflows</Link>
      </div>
    );
  }
  if (!saved || !draft || !payload) return <p className="muted">Loading the workflow…</p>;

  const problems = d.problems;
  const path = normalizedPath(draft.trigger.path) ?? saved.trigger.path ?? '';
  const setTrigger = (patch: Partial<TriggerDraft>) =>
    d.setDraft({ ...draft, trigger: { ...draft.trigger, ...patch } });
  const listen = async (seconds: number) => {
    if (await saveBeforeTest('panel')) await test.start(seconds);
  };
  const { found } = panel;
  const details = found ? (
    <StepPanel
      found={found}
      panel={panel}
      headingId={headingId}
      context={ctx.contextFor(found.at)}
      result={ctx.results[found.at]}
      problems={problems}
      responseMode={draft.trigger.responseMode}
    />
  ) : (
    <TriggerDetails
      panel={panel}
      saved={saved}
      trigger={draft.trigger}
      path={path}
      dirty={dirty}
      saving={d.saving}
      test={test}
      testRun={testRun}
      lastRun={<LastRunLine last={testRun.last} stale={stale} />}
      testNote={testNote}
      onListen={listen}
      onChange={setTrigger}
      problems={problems}
    />
  );
  const panelTitle = found ? panel.stepTitle : panel.triggerTitle;

  return (
    <VariablesContext.Provider value={ctx.editorVariables}>
      <article className="editor" aria-labelledby={headingId}>
        <EditorHeader
          headingId={headingId}
          saved={saved}
          name={draft.name}
          onName={(name) => d.setDraft({ ...draft, name })}
          dirty={dirty}
          saving={d.saving}
          busy={publish.toggling || publish.reviewing}
          onSave={d.save}
          onPublish={publish.startPublish}
          onActive={publish.toggleActive}
        />
        <Notice text={d.status} />
        {canEdit && (draft.steps.length > 0 || testRun.last) && (
          <TestBar
            last={testRun.last}
            stale={stale}
            running={testRun.busy !== null}
            disabled={d.saving}
            onRunNow={() => testRun.runNow(item)}
          />
        )}
        <ErrorMessage error={testRun.error?.from === 'run' ? testRun.error.error : null} title="Not run" />
        <ErrorMessage
          error={publish.activeError}
          title={saved.active ? 'Could not deactivate' : 'Could not activate'}
        />
        <ErrorMessage
          key={d.failedSaves}
          error={d.saveError}
          title="Not saved"
          onField={panel.revealField}
          body={payload.body}
          takeFocus
        />
        {d.conflict && !saved.active && <PathConflictWarning conflict={d.conflict} />}
        {publish.dialog}
        {leaveGuard.dialog}
        {panel.deleteDialog}

        <Tabs
          label="Workflow"
          selected={panel.view}
          onSelect={(v) => panel.setView(v as 'flow' | 'settings')}
          tabs={[
            {
              id: 'flow',
              label: 'Flow',
              content: (
                <div className="flow-layout">
                  <div className="flow-column">
                    <TriggerCard
                      trigger={draft.trigger}
                      path={path}
                      listening={test.listener !== null}
                      captured={test.selected ? 'captured' : undefined}
                      selected={panel.panelOpen && !found}
                      invalid={problems.some((p) => p.field.startsWith('/trigger'))}
                      nextRunAt={saved.trigger.type === 'schedule' ? saved.trigger.nextRunAt : undefined}
                      controls={panel.panelOpen && !found ? `${headingId}-panel` : undefined}
                      onSelect={panel.chooseTrigger}
                    />
                    <div className="area-steps">
                      <StepFlow
                        steps={draft.steps}
                        results={ctx.results}
                        names={names}
                        problems={problems}
                        selected={panel.panelOpen ? found?.step.key : undefined}
                        controls={panel.panelOpen ? `${headingId}-panel` : undefined}
                        onSelect={panel.selectStep}
                        onList={panel.setList}
                        onAdded={panel.selectStep}
                        onDelete={panel.setDeleting}
                      />
                    </div>
                  </div>
                  {panel.wide ? (
                    <section id={`${headingId}-panel`} className="side-panel" aria-labelledby={panelTitle}>
                      {details}
                    </section>
                  ) : (
                    panel.sheet && (
                      <Sheet id={`${headingId}-panel`} labelledBy={panelTitle} onClose={panel.closeSheet}>
                        {details}
                      </Sheet>
                    )
                  )}
                </div>
              ),
            },
            {
              id: 'settings',
              label: 'Settings',
              content: (
                <SettingsView
                  workflowId={id}
                  draft={draft}
                  onChange={d.setDraft}
                  fields={ctx.searchable}
                  problems={problems}
                  expressionContext={ctx.triggerContext}
                />
              ),
            },
          ]}
        />
      </article>
    </VariablesContext.Provider>
  );
}
