import { useEffect, useState } from 'react';
import { type ApiError, api, asApiError } from '../../api';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ErrorMessage } from '../../components/ErrorMessage';
import { VersionDiffView } from '../../components/VersionDiffView';
import { type VersionContent, versionContent } from '../../lib/publishing';
import type { Step, Trigger, Workflow } from '../../types';
import { runTests, SuiteResults, type SuiteRun } from './TestsPanel';

export interface PublishReview {
  /** null: nothing was published yet (an inactive workflow's history can publish its first version). */
  publishedVersion: number | null;
  draftVersion: number;
  /** Whether the production URL serves (what publishing changes now, or once activated). */
  active: boolean;
  /** undefined while the published version loads, and when there is none. */
  published?: VersionContent;
  draft: VersionContent;
  error?: ApiError | null;
  busy?: boolean;
}

/**
 * The review Publish shows for workflow `w` (its draft, then the published version it replaces,
 * given to `update` as it loads): one flow for the editor and the version history.
 */
export async function loadPublishReview(
  w: Workflow,
  update: (next: (r: PublishReview | null) => PublishReview | null) => void,
): Promise<void> {
  const publishedVersion = w.publishedVersion;
  update(() => ({ publishedVersion, draftVersion: w.version, active: w.active, draft: versionContent(w) }));
  if (publishedVersion === null) return;
  try {
    const v = await api<{ name: string; trigger: Trigger; steps: Step[]; settings?: unknown }>(
      'GET',
      `/workflows/${encodeURIComponent(w.id)}/versions/${publishedVersion}`,
    );
    update((r) => r && { ...r, published: versionContent(v) });
  } catch (err) {
    update((r) => r && { ...r, error: asApiError(err) });
  }
}

/**
 * Before Publish: what the draft changes against the published version (a structured diff, the
 * raw JSON of both one click away), and the workflow's tests run against the draft (SPEC 7g), so nothing goes
 * live unseen.
 */
export function PublishDialog({
  workflowId,
  review,
  onPublish,
  onCancel,
}: {
  workflowId: string;
  review: PublishReview | null;
  onPublish: () => void;
  onCancel: () => void;
}) {
  return (
    <ConfirmDialog
      open={review !== null}
      wide
      title={review ? `Publish draft v${review.draftVersion}?` : 'Publish'}
      confirmLabel="Publish"
      busy={!review || (review.publishedVersion !== null && !review.published) || review.busy}
      onConfirm={onPublish}
      onCancel={onCancel}
    >
      {review && (
        <>
          <p>
            {review.active
              ? `Live traffic runs ${review.publishedVersion === null ? 'nothing' : `v${review.publishedVersion}`} until you publish; then it runs draft v${review.draftVersion}.`
              : `The workflow is not active: publishing makes draft v${review.draftVersion} the version its production URL runs once it is activated.`}
          </p>
          {review.publishedVersion === null ? (
            <p className="small">
              Nothing was published before: every step of the draft is new to production.
            </p>
          ) : review.published ? (
            <VersionDiffView
              before={review.published}
              after={review.draft}
              beforeLabel={`Published v${review.publishedVersion}`}
              afterLabel={`Draft v${review.draftVersion}`}
            />
          ) : (
            !review.error && <p className="muted">Loading the published version…</p>
          )}
          <DraftTests workflowId={workflowId} draftVersion={review.draftVersion} />
          <ErrorMessage error={review.error ?? null} title="Not published" />
        </>
      )}
    </ConfirmDialog>
  );
}

/** The workflow's tests against the draft about to be published; nothing when it has none. */
function DraftTests({ workflowId, draftVersion }: { workflowId: string; draftVersion: number }) {
  const [suite, setSuite] = useState<SuiteRun | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new draft version runs the tests again
  useEffect(() => {
    let cancelled = false;
    setSuite(null);
    api<{ items: unknown[] }>('GET', `/workflows/${encodeURIComponent(workflowId)}/tests`)
      .then((tests) => (tests.items.length > 0 ? runTests(workflowId, 'draft') : null))
      .then(
        (result) => !cancelled && setSuite(result),
        (err) => !cancelled && setError(asApiError(err)),
      );
    return () => {
      cancelled = true;
    };
  }, [workflowId, draftVersion]);
  if (error) return <ErrorMessage error={error} title="The tests could not run" />;
  return suite ? <SuiteResults suite={suite} /> : null;
}
