import type { ReactNode } from 'react';
import type { FieldProblem } from '../../api';
import { curlLine, fillParams, primaryMethod } from '../../lib/curl';
import type { TriggerDraft } from '../../lib/draft';
import { useCan } from '../../lib/role';
import type { Workflow } from '../../types';
import { PanelHead } from './StepPanel';
import { TestPanel } from './TestPanel';
import { TriggerPanel } from './TriggerPanel';
import { UrlPanel } from './UrlPanel';
import type { EditorPanel } from './useEditorPanel';
import type { TestEvents } from './useTestEvents';
import type { TestRun } from './useTestRun';

/** The trigger card's panel: a webhook's URLs and test events (listen, replay), and the trigger's form. */
export function TriggerDetails({
  panel,
  saved,
  trigger,
  path,
  dirty,
  saving,
  test,
  testRun,
  lastRun,
  testNote,
  onListen,
  onChange,
  problems,
}: {
  panel: EditorPanel;
  saved: Workflow;
  trigger: TriggerDraft;
  /** The path on screen (normalised), or the saved one while the field is invalid. */
  path: string;
  dirty: boolean;
  saving: boolean;
  test: TestEvents;
  testRun: TestRun;
  lastRun: ReactNode;
  testNote: string;
  onListen: (seconds: number) => Promise<void>;
  onChange: (patch: Partial<TriggerDraft>) => void;
  problems: FieldProblem[];
}) {
  const canEdit = useCan('editor');
  // A schedule trigger (SPEC 7f) has no URLs: the webhook form then starts without a path.
  const savedTestUrl = saved.trigger.testUrl ?? '';
  const baseUrl = savedTestUrl.slice(
    0,
    savedTestUrl.length - `/webhook-test/${saved.trigger.path ?? ''}`.length,
  );
  const testUrl = `${baseUrl}/webhook-test/${path}`;
  return (
    <>
      <PanelHead id={panel.triggerTitle} onBack={panel.wide ? undefined : panel.closeSheet}>
        Trigger
      </PanelHead>
      {/* A schedule (SPEC 7f) has no URL, test listening, refusals, auth or alerts: only its own fields. */}
      {trigger.type !== 'schedule' && (
        <>
          <UrlPanel
            baseUrl={baseUrl}
            path={path}
            methods={trigger.methods}
            auth={trigger.auth}
            active={saved.active}
            publishedVersion={saved.publishedVersion}
            listening={test.listener !== null}
            unsaved={dirty}
          />
          {canEdit && (
            <TestPanel
              test={test}
              testRun={testRun}
              lastRun={lastRun}
              testUrl={testUrl}
              curl={curlLine(fillParams(testUrl), primaryMethod(trigger.methods), trigger.auth)}
              onListen={onListen}
              busy={saving}
              savedNote={testNote}
              draftVersion={saved.version}
            />
          )}
        </>
      )}
      <fieldset className="read-only-fields" disabled={!canEdit}>
        <TriggerPanel
          savedType={saved.trigger.type}
          trigger={trigger}
          onChange={onChange}
          problems={problems}
          savedAuth={saved.trigger.auth}
          savedHandshakeToken={saved.trigger.handshakeToken}
        />
      </fieldset>
    </>
  );
}
