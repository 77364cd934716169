import { useCallback, useEffect, useId, useState } from 'react';
import { type ApiError, api, asApiError } from '../api';
import { ErrorMessage } from '../components/ErrorMessage';
import { VersionDiffView } from '../components/VersionDiffView';
import { ListTable, RowAction } from '../components/ListTable';
import { Notice } from '../components/Notice';
import { formatAgo, formatTime } from '../lib/format';
import { type VersionContent, versionContent } from '../lib/publishing';
import { useTitle } from '../lib/title';
import { useAction } from '../lib/useAction';
import { usePagedList } from '../lib/usePagedList';
import { Link } from '../router';
import type { Step, Trigger, Workflow } from '../types';
import { useCan } from '../lib/role';
import { loadPublishReview, PublishDialog, type PublishReview } from './editor/PublishDialog';

interface VersionItem {
  version: number;
  createdAt: string;
  name: string;
  /** Who saved it: `token "<name>"` or the account's email; null when unknown (CLI, older versions). */
  savedBy?: string | null;
}

async function readVersion(workflowId: string, version: number): Promise<VersionContent> {
  const v = await api<{ name: string; trigger: Trigger; steps: Step[]; settings?: unknown }>(
    'GET',
    `/workflows/${encodeURIComponent(workflowId)}/versions/${version}`,
  );
  return versionContent({ ...v, settings: v.settings ?? {} });
}

/**
 * A workflow's saved versions (SPEC 7c), newest first, with the published one and the latest (the
 * draft) marked; any two compared (steps added, removed, moved, fields changed; the raw JSON one
 * click away); restore saves an old one's content as a new draft version, and Publish puts the
 * draft live after the same review the editor shows — two deliberate steps.
 */
export function VersionHistory({ id }: { id: string }) {
  const canEdit = useCan('editor');
  const headingId = useId();
  const [workflow, setWorkflow] = useState<Workflow | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction(setError);
  const [left, setLeft] = useState<number | null>(null);
  const [right, setRight] = useState<number | null>(null);
  const [diff, setDiff] = useState<{ left: VersionContent; right: VersionContent } | null>(null);
  const [review, setReview] = useState<PublishReview | null>(null);
  useTitle('Version history', workflow?.name);
  const base = `/workflows/${encodeURIComponent(id)}`;
  // Loaded with the workflow (below), so the two show together.
  const {
    items: versions,
    hasMore,
    more,
    fetchFirst,
    show,
  } = usePagedList<VersionItem>(`${base}/versions`, 100, setError, { loadOnMount: false });

  const load = useCallback(async () => {
    try {
      const [w, page] = await Promise.all([api<Workflow>('GET', base), fetchFirst()]);
      setWorkflow(w);
      show(page);
      return { w, items: page.items };
    } catch (err) {
      setError(asApiError(err));
      return undefined;
    }
  }, [base, fetchFirst, show]);

  useEffect(() => {
    load().then((r) => {
      if (!r) return;
      // Compare the published version (or the one before the latest) with the latest at first.
      const latest = r.items[0]?.version ?? null;
      const other =
        r.w.publishedVersion && r.w.publishedVersion !== latest ? r.w.publishedVersion : r.items[1]?.version;
      setRight(latest);
      setLeft(other ?? latest);
    });
  }, [load]);

  useEffect(() => {
    if (left === null || right === null) return;
    let cancelled = false;
    Promise.all([readVersion(id, left), readVersion(id, right)]).then(
      ([l, r]) => !cancelled && setDiff({ left: l, right: r }),
      (err) => !cancelled && setError(asApiError(err)),
    );
    return () => {
      cancelled = true;
    };
  }, [id, left, right]);

  const restore = async (version: number) => {
    setError(null);
    setNotice(null);
    await action.run(async () => {
      const w = await api<Workflow>('POST', `${base}/versions/${version}/restore`);
      await load();
      setRight(w.version);
      setLeft(version);
      setNotice(
        `Restored v${version} as draft v${w.version}. ${
          w.active
            ? `Live traffic still runs v${w.publishedVersion}: publish to put it live.`
            : 'Test runs use it now.'
        }`,
      );
    });
  };

  const startPublish = () => {
    setError(null);
    setNotice(null);
    if (workflow) loadPublishReview(workflow, setReview);
  };

  const publish = async () => {
    if (!review) return;
    setReview({ ...review, busy: true, error: null });
    try {
      const w = await api<Workflow>('POST', `${base}/publish`);
      setWorkflow(w);
      setReview(null);
      setNotice(`Published v${w.publishedVersion}: live traffic runs it now.`);
    } catch (err) {
      setReview({ ...review, busy: false, error: asApiError(err) });
    }
  };

  const latest = versions?.[0]?.version;
  const canPublish = workflow !== null && workflow.publishedVersion !== workflow.version;
  const options = versions ?? [];

  return (
    <article aria-labelledby={headingId}>
      <Link to={base} className="small muted back-link">
        ← Back to the editor
      </Link>
      <div className="page-head">
        <h1 id={headingId}>Version history{workflow ? `: ${workflow.name}` : ''}</h1>
        {canPublish && canEdit && (
          <div className="page-actions">
            <button
              type="button"
              className="button primary"
              onClick={startPublish}
              disabled={action.busy || review !== null}
            >
              Publish v{workflow?.version}
            </button>
          </div>
        )}
      </div>
      <p className="muted">
        Every save is kept as a version. Restoring one saves its content as a new draft version; live traffic
        keeps running the published version until you publish.
        {workflow && (
          <>
            {' '}
            Published:{' '}
            <strong>
              {workflow.publishedVersion === null ? 'none yet' : `v${workflow.publishedVersion}`}
            </strong>
            {workflow.active ? '' : ' (the workflow is not active)'}.
          </>
        )}
      </p>
      <Notice text={notice} />
      <ErrorMessage error={error} />

      {versions === null && !error && <p className="muted">Loading the versions…</p>}
      {versions !== null && (
        <ListTable
          caption="Saved versions, newest first"
          columns={['Version', 'Saved', 'By', 'Name']}
          onMore={hasMore ? more : undefined}
        >
          {versions.map((v) => (
            <tr key={v.version} data-testid={`version-${v.version}`}>
              <th scope="row">
                v{v.version}{' '}
                {workflow?.publishedVersion === v.version && (
                  <span className="badge status-succeeded">Published</span>
                )}{' '}
                {v.version === latest && <span className="badge mode-test">Latest (draft)</span>}
              </th>
              <td title={formatTime(v.createdAt)}>{formatAgo(v.createdAt)}</td>
              <td>{v.savedBy ?? <span className="muted">unknown</span>}</td>
              <td>{v.name}</td>
              <td className="actions-cell">
                <button
                  type="button"
                  className="button small"
                  onClick={() => {
                    setLeft(v.version);
                    if (latest !== undefined) setRight(latest);
                    document.getElementById(`${headingId}-compare`)?.focus();
                  }}
                  aria-label={`Compare v${v.version} with the latest`}
                >
                  Compare
                </button>{' '}
                {v.version !== latest && canEdit && (
                  <RowAction
                    action="Restore"
                    row={`v${v.version}`}
                    disabled={action.busy}
                    onClick={() => restore(v.version)}
                  />
                )}
              </td>
            </tr>
          ))}
        </ListTable>
      )}

      {versions !== null && versions.length > 0 && (
        <section className="card" aria-labelledby={`${headingId}-compare`}>
          <h2 id={`${headingId}-compare`} tabIndex={-1}>
            Compare two versions
          </h2>
          <div className="row compare-pick">
            {(
              [
                ['Left', left, setLeft],
                ['Right', right, setRight],
              ] as const
            ).map(([label, value, set]) => (
              <div className="field compact" key={label}>
                <label htmlFor={`${headingId}-${label}`} className="label">
                  {label}
                </label>
                <select
                  id={`${headingId}-${label}`}
                  className="input"
                  value={value ?? ''}
                  onChange={(e) => set(Number(e.target.value))}
                >
                  {options.map((v) => (
                    <option key={v.version} value={v.version}>
                      v{v.version}
                      {workflow?.publishedVersion === v.version ? ' (published)' : ''}
                      {v.version === latest ? ' (latest)' : ''}
                    </option>
                  ))}
                </select>
              </div>
            ))}
          </div>
          {diff && (
            <VersionDiffView
              before={diff.left}
              after={diff.right}
              beforeLabel={`Version ${left}`}
              afterLabel={`Version ${right}`}
            />
          )}
        </section>
      )}
      <PublishDialog workflowId={id} review={review} onPublish={publish} onCancel={() => setReview(null)} />
    </article>
  );
}
