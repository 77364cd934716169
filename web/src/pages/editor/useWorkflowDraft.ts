/**
 * The workflow being edited: the saved version, the draft on screen, whether they differ, Save,
 * and what a failed save still says about the draft (lib/saveErrors.ts). Every save is a new
 * version, the draft (SPEC 1); the header's notice says what it means for live traffic.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { ApiError, api, asApiError } from '../../api';
import { type Draft, draftFrom, payloadFrom } from '../../lib/draft';
import { findPathConflict, type PathConflict } from '../../lib/pathConflicts';
import { savedNotice } from '../../lib/publishing';
import { currentFailure, type SaveFailure } from '../../lib/saveErrors';
import type { Workflow } from '../../types';

const FIX_HINT = 'Fix the fields listed here (each link goes to its field), then save again.';

export function useWorkflowDraft(id: string) {
  const [saved, setSaved] = useState<Workflow | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [loadError, setLoadError] = useState<ApiError | null>(null);
  /** The last failed save, as it was; what of it still holds is worked out from the draft. */
  const [saveFailure, setSaveFailure] = useState<SaveFailure | null>(null);
  const [saving, setSaving] = useState(false);
  const [showProblems, setShowProblems] = useState(false);
  /** The header's notice: what the last save, publish or activation did. */
  const [status, setStatus] = useState('');
  /** Another active workflow on this (inactive) workflow's method+path, found after a save. */
  const [conflict, setConflict] = useState<PathConflict | null>(null);
  /** Bumped by each failed save, so the error summary takes focus again (saveErrors in the page). */
  const [failedSaves, setFailedSaves] = useState(0);

  useEffect(() => {
    api<Workflow>('GET', `/workflows/${encodeURIComponent(id)}`).then(
      (w) => {
        setSaved(w);
        setDraft(draftFrom(w));
      },
      (err) => setLoadError(asApiError(err)),
    );
  }, [id]);

  const payload = useMemo(() => (draft ? payloadFrom(draft) : null), [draft]);
  const savedBody = useMemo(() => (saved ? JSON.stringify(payloadFrom(draftFrom(saved)).body) : ''), [saved]);
  const dirty = payload !== null && JSON.stringify(payload.body) !== savedBody;

  const save = useCallback(async (): Promise<Workflow | null> => {
    if (!payload || !draft) return null;
    setShowProblems(true);
    setSaveFailure(null);
    if (payload.problems.length > 0) {
      setSaveFailure({
        status: 400,
        code: 'validation_failed',
        message: 'Some fields need fixing.',
        hint: FIX_HINT,
        fields: [],
        local: true,
        body: payload.body,
      });
      setFailedSaves((n) => n + 1);
      return null;
    }
    setSaving(true);
    try {
      const w = await api<Workflow>('PUT', `/workflows/${encodeURIComponent(id)}`, payload.body);
      const next = draftFrom(w);
      // Same steps in the same order: keep their keys, so nothing on screen is rebuilt.
      if (next.steps.length === draft.steps.length)
        for (const [i, s] of next.steps.entries()) s.key = draft.steps[i]!.key;
      setSaved(w);
      setDraft(next);
      setShowProblems(false);
      // SPEC 1: a save is a draft; production keeps its published version until publish/activate.
      setStatus(savedNotice(w));
      // The server refuses this for an active workflow; an inactive one is warned now, not at Activate.
      if (w.active) setConflict(null);
      else findPathConflict(w).then(setConflict, () => setConflict(null));
      return w;
    } catch (err) {
      const e = asApiError(err);
      setSaveFailure({
        status: e.status,
        code: e.code,
        message: e.message,
        hint: e.hint,
        fields: e.fields,
        conflictingWorkflow: e.conflictingWorkflow,
        local: false,
        body: payload.body,
      });
      setFailedSaves((n) => n + 1);
      return null;
    } finally {
      setSaving(false);
    }
  }, [payload, draft, id]);

  /** Saves pending edits before a test or a publish: the workflow as saved, whether it saved now; null when it failed. */
  const saveFirst = useCallback(async (): Promise<{ workflow: Workflow; savedNow: boolean } | null> => {
    if (!saved) return null;
    if (!dirty) return { workflow: saved, savedNow: false };
    const w = await save();
    return w && { workflow: w, savedNow: true };
  }, [saved, dirty, save]);

  const failure = payload && currentFailure(saveFailure, payload.body, payload.problems, dirty);
  const saveError =
    failure &&
    new ApiError(
      failure.status,
      failure.code,
      failure.message,
      // The API's hint speaks of requests; here the user saves.
      failure.code === 'validation_failed' && failure.fields.length > 0 ? FIX_HINT : failure.hint,
      failure.fields,
      failure.conflictingWorkflow,
    );
  // The form's own problems are live; the server's stay only on fields not edited since, and only
  // where the form has nothing to say about the field (one message per field, not two).
  const local = showProblems && payload ? payload.problems : [];
  const problems = [
    ...local,
    ...(saveFailure?.local ? [] : (failure?.fields ?? [])).filter(
      (p) => !local.some((l) => l.field === p.field),
    ),
  ];

  return {
    saved,
    setSaved,
    draft,
    setDraft,
    loadError,
    payload,
    dirty,
    saving,
    save,
    saveFirst,
    saveError,
    failedSaves,
    problems,
    status,
    setStatus,
    conflict,
  };
}

export type WorkflowDraft = ReturnType<typeof useWorkflowDraft>;
