import { useEffect, useState } from 'react';
import { type ApiError, api, asApiError } from '../../api';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ErrorMessage } from '../../components/ErrorMessage';
import { JsonView } from '../../components/JsonView';
import { changedParts, type VersionContent } from '../../lib/publishing';
import { runTests, SuiteResults, type SuiteRun } from './TestsPanel';

export interface PublishReview {
  publishedVersion: number;
  draftVersion: number;
  /** undefined while the published version loads. */
  published?: VersionContent;
  draft: VersionContent;
  error?: ApiError | null;
  busy?: boolean;
}

/**
 * Before Publish: the published version and the draft side by side as JSON, with what differs
 * named above them, and the workflow's tests run against the draft (SPEC 7g), so nothing goes
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
  const parts = review?.published ? changedParts(review.published, review.draft) : [];
  return (
    <ConfirmDialog
      open={review !== null}
      wide
      title={review ? `Publish draft v${review.draftVersion}?` : 'Publish'}
      confirmLabel="Publish"
      busy={!review?.published || review.busy}
      onConfirm={onPublish}
      onCancel={onCancel}
    >
      {review && (
        <>
          <p>
            Live traffic runs v{review.publishedVersion} until you publish; then it runs draft v
            {review.draftVersion}.
          </p>
          {review.published ? (
            <>
              <p className="small">
                {parts.length > 0 ? (
                  <>
                    Changed: <strong>{parts.join(', ')}</strong>.
                  </>
                ) : (
                  'The draft has the same content as the published version.'
                )}
              </p>
              <div className="version-diff">
                <JsonView value={review.published} label={`Published v${review.publishedVersion}`} />
                <JsonView value={review.draft} label={`Draft v${review.draftVersion}`} />
              </div>
            </>
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
