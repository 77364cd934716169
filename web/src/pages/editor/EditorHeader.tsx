import { Switch } from '../../components/Switch';
import { useCan } from '../../lib/role';
import { publishState } from '../../lib/publishing';
import { Link } from '../../router';
import type { PathConflict } from '../../lib/pathConflicts';
import type { Workflow } from '../../types';

/**
 * The editor's header: the workflow's name, its draft/published state with the Activated switch,
 * and its actions (Publish, Executions, History, Save).
 */
export function EditorHeader({
  headingId,
  saved,
  name,
  onName,
  dirty,
  saving,
  busy,
  onSave,
  onPublish,
  onActive,
}: {
  headingId: string;
  saved: Workflow;
  name: string;
  onName: (name: string) => void;
  dirty: boolean;
  saving: boolean;
  /** Activating or publishing: the state's controls wait. */
  busy: boolean;
  onSave: () => void;
  onPublish: () => void;
  onActive: (next: boolean) => void;
}) {
  const canEdit = useCan('editor');
  const id = encodeURIComponent(saved.id);
  const state = publishState(saved);
  return (
    <>
      <div className="editor-head">
        <div className="editor-title">
          <Link to="/" className="small muted back-link">
            ← Workflows
          </Link>
          <h1 id={headingId} className="visually-hidden">
            Workflow {name}
          </h1>
          <label htmlFor={`${headingId}-name`} className="visually-hidden">
            Workflow name
          </label>
          <input
            id={`${headingId}-name`}
            data-field="/name"
            className="title-input"
            readOnly={!canEdit}
            value={name}
            onChange={(e) => onName(e.target.value)}
          />
        </div>
        <div className="editor-actions">
          <div className={`state state-${state.kind}`} id={`${headingId}-state`}>
            {canEdit && (
              <Switch
                checked={saved.active}
                label="Activated"
                disabled={busy || saving}
                describedBy={`${headingId}-state-detail`}
                onChange={onActive}
              />
            )}
            <span className="state-text" data-testid="publish-state">
              {state.label}
            </span>
          </div>
          {state.canPublish && canEdit && (
            <button
              type="button"
              className="button publish"
              onClick={onPublish}
              disabled={saving || busy}
              aria-describedby={`${headingId}-state-detail`}
            >
              Publish
            </button>
          )}
          <Link to={`/executions?workflowId=${id}`} className="button">
            Executions
          </Link>
          <Link to={`/workflows/${id}/versions`} className="button">
            History
          </Link>
          {canEdit && (
            <button type="button" className="button primary" onClick={onSave} disabled={!dirty || saving}>
              {saving ? 'Saving…' : dirty ? 'Save' : 'Saved'}
            </button>
          )}
        </div>
      </div>
      <p className="small muted state-detail" id={`${headingId}-state-detail`}>
        {state.detail}
      </p>
    </>
  );
}

/** Saved, but another active workflow holds this inactive one's method and path. */
export function PathConflictWarning({ conflict }: { conflict: PathConflict }) {
  return (
    <p className="notice warn-notice" role="status" data-testid="path-conflict-warning">
      Saved, but workflow <Link to={`/workflows/${encodeURIComponent(conflict.id)}`}>{conflict.name}</Link> is
      active on {conflict.methods.join(', ')} /webhook/{conflict.path}: this workflow cannot be activated on
      that path until that one is deactivated or this path or method changes.
    </p>
  );
}
