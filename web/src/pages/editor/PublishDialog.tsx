import type { ApiError } from '../../api';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ErrorMessage } from '../../components/ErrorMessage';
import { JsonView } from '../../components/JsonView';
import { changedParts, type VersionContent } from '../../lib/publishing';

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
 * named above them, so nothing goes live unseen (issue 17).
 */
export function PublishDialog({
  review,
  onPublish,
  onCancel,
}: {
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
          <ErrorMessage error={review.error ?? null} title="Not published" />
        </>
      )}
    </ConfirmDialog>
  );
}
