/**
 * Putting the draft live: Publish (save pending edits, compare the published version with the
 * draft, confirm) and the Activated switch (activating publishes the latest saved version).
 */
import { useState } from 'react';
import { type ApiError, api, asApiError } from '../../api';
import { setActive } from '../../lib/workflows';
import type { Workflow } from '../../types';
import { loadPublishReview, PublishDialog, type PublishReview } from './PublishDialog';
import type { WorkflowDraft } from './useWorkflowDraft';

export function usePublish(id: string, d: WorkflowDraft) {
  const [review, setReview] = useState<PublishReview | null>(null);
  const [toggling, setToggling] = useState(false);
  const [activeError, setActiveError] = useState<ApiError | null>(null);

  const toggleActive = async (next: boolean) => {
    setActiveError(null);
    setToggling(true);
    try {
      if (next && !(await d.saveFirst())) return;
      const w = await setActive(id, next);
      d.setSaved(w);
      d.setStatus(
        next
          ? `Activated: live traffic runs v${w.publishedVersion}, the latest saved version.`
          : w.trigger.type === 'schedule'
            ? `Deactivated: nothing runs on schedule (v${w.publishedVersion} was the last published version).`
            : `Deactivated: only the test URL serves (v${w.publishedVersion} was the last published version).`,
      );
    } catch (err) {
      setActiveError(asApiError(err));
    } finally {
      setToggling(false);
    }
  };

  /** Publish: save pending edits, then show the published version beside the draft. */
  const startPublish = async () => {
    setActiveError(null);
    const w = (await d.saveFirst())?.workflow;
    if (!w?.active || w.publishedVersion === null || w.publishedVersion >= w.version) return;
    await loadPublishReview(w, setReview);
  };

  const confirmPublish = async () => {
    if (!review) return;
    setReview({ ...review, busy: true, error: null });
    try {
      const w = await api<Workflow>('POST', `/workflows/${encodeURIComponent(id)}/publish`);
      d.setSaved(w);
      setReview(null);
      // Publish takes the latest version: if someone saved since the diff was drawn, say so.
      d.setStatus(
        w.publishedVersion === review.draftVersion
          ? `Published v${w.publishedVersion}: live traffic runs it now.`
          : `Published v${w.publishedVersion}, saved after the comparison you saw (v${review.draftVersion}): live traffic runs it now.`,
      );
    } catch (err) {
      setReview({ ...review, busy: false, error: asApiError(err) });
    }
  };

  const dialog = (
    <PublishDialog
      workflowId={id}
      review={review}
      onPublish={confirmPublish}
      onCancel={() => setReview(null)}
    />
  );
  return { reviewing: review !== null, toggling, activeError, toggleActive, startPublish, dialog };
}
