import { type ReactNode, useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import { ApiError, api, asApiError } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorMessage } from '../components/ErrorMessage';
import type { PickerField } from '../components/FieldPicker';
import { FIELD_PATH_PATTERN } from '../../../src/shared/search-fields';
import { Notice } from '../components/Notice';
import { Sheet } from '../components/Sheet';
import { Switch } from '../components/Switch';
import { Tabs } from '../components/Tabs';
import { curlLine, fillParams, primaryMethod } from '../lib/curl';
import {
  allNames,
  type Draft,
  draftFrom,
  normalizedPath,
  payloadFrom,
  STEP_TYPES,
  type StepDraft,
  type TriggerDraft,
} from '../lib/draft';
import { flattenValue, keyStep } from '../lib/flatten';
import { focusField } from '../lib/focusField';
import { typeOf } from '../lib/format';
import { findPathConflict, type PathConflict } from '../lib/pathConflicts';
import { publishState, savedNotice } from '../lib/publishing';
import { currentFailure, type SaveFailure } from '../lib/saveErrors';
import { type SimResult, type Simulation, simulate } from '../lib/simulate';
import { allSteps, findStep, replaceList } from '../lib/lanes';
import { itemFields, walkSteps } from '../lib/stepTree';
import { useTitle } from '../lib/title';
import { nextTickItem } from '../lib/schedule';
import { useMediaQuery } from '../lib/useMediaQuery';
import { setActive } from '../lib/workflows';
import { Link, setLeaveGuard } from '../router';
import type { LearnedField, TriggerItem, Workflow } from '../types';
import { loadPublishReview, PublishDialog, type PublishReview } from './editor/PublishDialog';
import { HealthPanel } from './editor/HealthPanel';
import { RejectionsPanel } from './editor/RejectionsPanel';
import { SettingsPanel } from './editor/SettingsPanel';
import { focusCard, StepFlow } from './editor/StepFlow';
import { StepLastOutput } from './editor/StepRunResult';
import { StepSettings } from './editor/StepSettings';
import { TestPanel } from './editor/TestPanel';
import { TestsPanel } from './editor/TestsPanel';
import { TriggerCard } from './editor/TriggerCard';
import { TriggerPanel } from './editor/TriggerPanel';
import { UrlPanel } from './editor/UrlPanel';
import { useTestEvents } from './editor/useTestEvents';
import { useCan } from '../lib/role';
import { secretsAllowedIn, type Variable, VariablesContext, varsOf } from '../lib/variables';

/** `base.expr`, or `base.(expr)` when expr is not a plain path. */
function under(base: string, expression: string): string {
  if (expression === '$') return base;
  return /^[A-Za-z_`][^$]*$/.test(expression) ? `${base}.${expression}` : `${base}.(${expression})`;
}

const DATA_PARTS = ['body', 'query', 'params', 'files'];
/** From this width the trigger's details sit beside the steps; below it they open as a sheet. */
const SIDE_PANEL = '(min-width: 1100px)';
const SEARCHABLE_PATH = new RegExp(FIELD_PATH_PATTERN);

type TriggerField = Omit<PickerField, 'insert'> & { expression: string };

/**
 * The learned fields (leaves and lists of scalars), with the objects and lists of the request on
 * screen that hold them put before their first field: a forEach needs a list, and a body may take
 * a whole object. Those inside a list (`body.lines[0]`) are left out: the learned paths speak of
 * every element (`body.lines[].sku`).
 */
function withContainers(
  learned: LearnedField[],
  item: TriggerItem | undefined,
): Omit<TriggerField, 'group'>[] {
  const leaves = learned.map((f) => ({
    label: f.path,
    expression: f.expression,
    type: f.type,
    example: f.example,
  }));
  const known = new Set(leaves.map((f) => f.label));
  const containers = flattenValue(item ?? {}, 500, { containers: true })
    .filter((r) => r.value !== null && typeof r.value === 'object' && !r.path.includes('['))
    .filter((r) => !known.has(r.path))
    .map((r) => ({ label: r.path, expression: r.expression, type: typeOf(r.value), example: r.value }));
  const placed = new Set<string>();
  const out: Omit<TriggerField, 'group'>[] = [];
  for (const f of leaves) {
    for (const c of containers)
      if (!placed.has(c.label) && (f.label.startsWith(`${c.label}.`) || f.label.startsWith(`${c.label}[`))) {
        placed.add(c.label);
        out.push(c);
      }
    out.push(f);
  }
  return [...out, ...containers.filter((c) => !placed.has(c.label))];
}

function triggerFields(learned: LearnedField[], item: TriggerItem | undefined): TriggerField[] {
  const list =
    learned.length > 0
      ? withContainers(learned, item)
      : flattenValue(item ?? {}, 500, { containers: true }).map((r) => ({
          label: r.path,
          expression: r.expression,
          type: typeOf(r.value),
          example: r.value,
        }));
  const rank = (label: string) => {
    const head = label.split(/[.[]/)[0]!;
    const i = DATA_PARTS.indexOf(head);
    return i === -1 ? (head === 'headers' ? 6 : 5) : i;
  };
  return list
    .map((f, i) => ({ ...f, i }))
    .sort((a, b) => rank(a.label) - rank(b.label) || a.i - b.i)
    .map(({ i: _i, ...f }) => ({
      ...f,
      group: DATA_PARTS.includes(f.label.split(/[.[]/)[0]!) ? 'Request data' : 'Request details',
    }));
}

export function WorkflowEditor({ id }: { id: string }) {
  const headingId = useId();
  // A viewer reads the workflow: no Save, Publish, activation or listening, and its fields are read-only.
  const canEdit = useCan('editor');
  const [saved, setSaved] = useState<Workflow | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [loadError, setLoadError] = useState<ApiError | null>(null);
  /** The last failed save, as it was; what of it still holds is worked out from the draft. */
  const [saveFailure, setSaveFailure] = useState<SaveFailure | null>(null);
  const [activeError, setActiveError] = useState<ApiError | null>(null);
  const [saving, setSaving] = useState(false);
  const [toggling, setToggling] = useState(false);
  const [status, setStatus] = useState('');
  const [showProblems, setShowProblems] = useState(false);
  const [sim, setSim] = useState<Simulation | undefined>();
  const [review, setReview] = useState<PublishReview | null>(null);
  /** What the last Listen saved, shown in the test panel where the user is looking. */
  const [listenNote, setListenNote] = useState('');
  /** Another active workflow on this (inactive) workflow's method+path, found after a save. */
  const [conflict, setConflict] = useState<PathConflict | null>(null);
  const test = useTestEvents(id);
  useTitle(saved?.name ?? 'Workflow');
  /** The steps and their trigger, or the workflow's settings. */
  const [view, setView] = useState<'flow' | 'settings'>('flow');
  const wide = useMediaQuery(SIDE_PANEL);
  /** On a narrow screen: the selected card's sheet is open. */
  const [sheet, setSheet] = useState(false);
  /** The card whose details the panel (or sheet) shows: the trigger, or a step by its key. */
  const [selected, setSelected] = useState<string>('trigger');
  const [stepTab, setStepTab] = useState<'settings' | 'output'>('settings');
  /** A step whose removal (Delete on its card) waits for confirmation. */
  const [deleting, setDeleting] = useState<string | null>(null);
  /** For the picker and previews; none for a viewer (the list is an editor's: SPEC 11b). */
  const [variables, setVariables] = useState<Variable[]>([]);
  useEffect(() => {
    if (!canEdit) return;
    let cancelled = false;
    // Without them the editor still works: previews just find no $vars.
    api<{ items: Variable[] }>('GET', '/variables').then(
      (list) => !cancelled && setVariables(list.items),
      () => undefined,
    );
    return () => {
      cancelled = true;
    };
  }, [canEdit]);
  const vars = useMemo(() => varsOf(variables), [variables]);
  const panelOpen = wide || sheet;
  // Widened to the side panel: the sheet is not reopened by narrowing the window again.
  useEffect(() => {
    if (wide) setSheet(false);
  }, [wide]);
  const openTrigger = () => {
    setSelected('trigger');
    setSheet(true);
    requestAnimationFrame(() => document.getElementById(`${headingId}-trigger-title`)?.focus());
  };
  const closeSheet = () => {
    setSheet(false);
    requestAnimationFrame(() => {
      const card =
        selected === 'trigger'
          ? document.querySelector<HTMLElement>('[data-testid="trigger-card"]')
          : document.querySelector<HTMLElement>(`[data-step-key="${CSS.escape(selected)}"]`);
      card?.focus();
    });
  };
  /** Choose a step's card: its settings in the panel; on a narrow screen, the sheet opens on them. */
  const selectStep = (key: string, focus: 'card' | 'panel' = 'card') => {
    setSelected(key);
    setStepTab('settings');
    if (!wide) setSheet(true);
    if (!wide || focus === 'panel')
      requestAnimationFrame(() => document.getElementById(`${headingId}-step-title`)?.focus());
    else focusCard(key);
  };
  /** An error summary's link: show the view and the card that hold the field, then focus it. */
  const revealField = (pointer: string): boolean => {
    if (pointer === '/settings' || pointer.startsWith('/settings/')) setView('settings');
    else setView('flow');
    if (pointer.startsWith('/trigger')) {
      setSelected('trigger');
      setSheet(true);
    } else if (pointer.startsWith('/steps/') && draft) {
      const holder = allSteps(draft.steps)
        .filter((f) => pointer === f.at || pointer.startsWith(`${f.at}/`))
        .pop();
      if (holder) {
        setSelected(holder.step.key);
        setStepTab('settings');
        setSheet(true);
      }
    }
    requestAnimationFrame(() => requestAnimationFrame(() => focusField(pointer)));
    return true;
  };

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
        hint: 'Fix the fields listed here (each link goes to its field), then save again.',
        fields: [],
        local: true,
        body: payload.body,
      });
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
      setListenNote('');
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
      return null;
    } finally {
      setSaving(false);
    }
  }, [payload, draft, id]);

  // Ctrl/Cmd+S saves; leaving with unsaved changes asks first.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
        e.preventDefault();
        if (dirty) save();
      }
    };
    const onLeave = (e: BeforeUnloadEvent) => {
      if (dirty) e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    window.addEventListener('beforeunload', onLeave);
    return () => {
      window.removeEventListener('keydown', onKey);
      window.removeEventListener('beforeunload', onLeave);
    };
  }, [dirty, save]);

  // Leaving by an in-app link with unsaved changes asks first (the reload/close case is above).
  const [leaving, setLeaving] = useState<{ proceed: () => void; busy: boolean } | null>(null);
  /** Set once the user chose to leave, so the navigation that follows is not asked about again. */
  const letGo = useRef(false);
  useEffect(() => {
    if (!dirty) return;
    return setLeaveGuard((proceed) => {
      if (letGo.current) return false;
      setLeaving({ proceed, busy: false });
      return true;
    });
  }, [dirty]);
  const leaveNow = (proceed: () => void) => {
    letGo.current = true;
    setLeaving(null);
    proceed();
  };
  const saveAndLeave = async () => {
    if (!leaving) return;
    setLeaving({ ...leaving, busy: true });
    // A save that fails keeps the user here, with its errors at the fields.
    if (await save()) leaveNow(leaving.proceed);
    else setLeaving(null);
  };

  const scheduleItem = useMemo(
    () =>
      draft?.trigger.type === 'schedule'
        ? nextTickItem(draft.trigger.cron, draft.trigger.timezone, new Date())
        : undefined,
    [draft?.trigger.type, draft?.trigger.cron, draft?.trigger.timezone],
  );
  const item = test.selected?.item ?? scheduleItem;
  const run = test.selected?.executionId ? test.runs[test.selected.executionId] : undefined;
  useEffect(() => {
    if (!payload || !item) {
      setSim(undefined);
      return;
    }
    let cancelled = false;
    const timer = setTimeout(() => {
      simulate(payload.body.steps, item, run, id, vars).then((s) => !cancelled && setSim(s));
    }, 200);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [payload, item, run, id, vars]);

  const learned = useMemo(() => triggerFields(test.schema?.fields ?? [], item), [test.schema, item]);
  /** The learned fields a search can index (scalars at a dotted path), for the Settings' picker. */
  const searchable = useMemo(
    () =>
      learned
        .filter((f) => SEARCHABLE_PATH.test(f.label) && !['object', 'array', 'null'].includes(f.type))
        .map((f) => ({ ...f, insert: f.label })),
    [learned],
  );

  const tree = useMemo(() => (payload ? walkSteps(payload.body.steps) : []), [payload]);
  const editorVariables = useMemo(
    () => ({ variables, secretsAllowed: secretsAllowedIn(tree) }),
    [variables, tree],
  );
  const results = useMemo(() => {
    if (!sim) return undefined;
    const out: Record<string, SimResult> = {};
    for (const [at, entry] of Object.entries(sim.byPath)) out[at] = entry.result;
    return out;
  }, [sim]);

  /** What the step at a JSON pointer sees: the trigger, earlier outputs, and inside a loop `$item`/`$index`. */
  const contextFor = useCallback(
    (at: string) => {
      const pos = tree.findIndex((t) => t.at === at);
      const me = tree[pos];
      const fields: PickerField[] = learned.map((f) => ({
        group: f.group,
        label: f.label,
        type: f.type,
        example: f.example,
        insert: at === '/steps/0' ? f.expression : under('$trigger', f.expression),
      }));
      const loop = me?.loops[me.loops.length - 1];
      if (loop) {
        const group = `Element of ${loop.step.name} ($item)`;
        const first = sim?.byPath[`${loop.at}/steps/0`]?.scope;
        const plain = learned.map((f) => ({
          label: f.label,
          expression: f.expression,
          type: f.type,
          example: f.example,
        }));
        for (const f of itemFields(loop.step.items, plain, first?.item))
          fields.push({ group, ...f, insert: f.expression });
        fields.push({ group, label: '$index', type: 'number', example: first?.index ?? 0, insert: '$index' });
      }
      tree.slice(0, Math.max(pos, 0)).forEach((t) => {
        // A step holding this one has not finished when this one runs.
        if (me?.parents.includes(t.at)) return;
        const output = sim?.byPath[t.at]?.result.output;
        if (output === undefined || output === null) return;
        const parts = t.at.split('/');
        const top = parts.length === 3;
        for (const r of flattenValue(output, 200, { containers: true })) {
          fields.push({
            group: top
              ? `Output of step ${Number(parts[2]) + 1} (${t.step.name})`
              : `Output of ${t.step.name}`,
            label: r.path,
            type: typeOf(r.value),
            example: r.value,
            insert: under(`$steps.${keyStep(t.step.name)}`, r.expression),
          });
        }
      });
      return { fields, scope: sim?.byPath[at]?.scope };
    },
    [learned, tree, sim],
  );
  /** What settings expressions see (the concurrency key): the trigger item, as the first step does. */
  const triggerContext = useMemo(() => contextFor('/steps/0'), [contextFor]);
  const names = useCallback(() => (draft ? allNames(draft.steps) : new Set<string>()), [draft]);
  /** One list of steps (the top level or a nested one, by identity) becomes `next`. */
  const setList = useCallback(
    (list: StepDraft[], next: StepDraft[]) =>
      setDraft((d) => d && { ...d, steps: replaceList(d.steps, list, next) }),
    [],
  );
  /** Removes a step; the card after it (or before it, or the trigger) is selected and focused. */
  const removeStep = (key: string) => {
    if (!draft) return;
    const found = findStep(draft.steps, key);
    if (!found) return;
    const { list, index } = found;
    const neighbour = list[index + 1] ?? list[index - 1];
    const holder = allSteps(draft.steps)
      .filter((f) => found.at.startsWith(`${f.at}/`))
      .pop();
    setList(
      list,
      list.filter((_, i) => i !== index),
    );
    const next = neighbour?.key ?? holder?.step.key;
    setSelected(next ?? 'trigger');
    setSheet(false);
    requestAnimationFrame(() =>
      (next
        ? document.querySelector<HTMLElement>(`[data-step-key="${CSS.escape(next)}"]`)
        : document.getElementById('flow-steps-title')
      )?.focus(),
    );
  };

  const toggleActive = async (next: boolean) => {
    setActiveError(null);
    setToggling(true);
    try {
      if (next && dirty && !(await save())) return;
      const w = await setActive(id, next);
      setSaved(w);
      setStatus(
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

  const listen = async (seconds: number) => {
    if (dirty) {
      const w = await save();
      if (!w) return;
      // Said where the user clicked (the test panel), not in the header as well.
      setStatus('');
      setListenNote(savedNotice(w));
    }
    await test.start(seconds);
  };

  /** Publish: save pending edits, then show the published version beside the draft. */
  const startPublish = async () => {
    setActiveError(null);
    const w = dirty ? await save() : saved;
    if (!w?.active || w.publishedVersion === null || w.publishedVersion >= w.version) return;
    await loadPublishReview(w, setReview);
  };

  const confirmPublish = async () => {
    if (!review) return;
    setReview({ ...review, busy: true, error: null });
    try {
      const w = await api<Workflow>('POST', `/workflows/${encodeURIComponent(id)}/publish`);
      setSaved(w);
      setReview(null);
      setListenNote('');
      // Publish takes the latest version: if someone saved since the diff was drawn, say so.
      setStatus(
        w.publishedVersion === review.draftVersion
          ? `Published v${w.publishedVersion}: live traffic runs it now.`
          : `Published v${w.publishedVersion}, saved after the comparison you saw (v${review.draftVersion}): live traffic runs it now.`,
      );
    } catch (err) {
      setReview({ ...review, busy: false, error: asApiError(err) });
    }
  };

  if (loadError) {
    return (
      <div className="card">
        <h1>Workflow</h1>
        <ErrorMessage error={loadError} />
        <Link to="/">Back to the workflows</Link>
      </div>
    );
  }
  if (!saved || !draft || !payload) return <p className="muted">Loading the workflow…</p>;

  const failure = currentFailure(saveFailure, payload.body, payload.problems, dirty);
  const saveError =
    failure &&
    new ApiError(
      failure.status,
      failure.code,
      failure.message,
      // The API's hint speaks of requests; here the user saves (issue 17 #6).
      failure.code === 'validation_failed' && failure.fields.length > 0
        ? 'Fix the fields listed here (each link goes to its field), then save again.'
        : failure.hint,
      failure.fields,
      failure.conflictingWorkflow,
    );
  // The form's own problems are live; the server's stay only on fields not edited since, and only
  // where the form has nothing to say about the field (one message per field, not two).
  const local = showProblems ? payload.problems : [];
  const problems = [
    ...local,
    ...(saveFailure?.local ? [] : (failure?.fields ?? [])).filter(
      (p) => !local.some((l) => l.field === p.field),
    ),
  ];
  // A schedule trigger (SPEC 7f) has no URLs: the webhook form then starts without a path.
  const savedTestUrl = saved.trigger.testUrl ?? '';
  const savedPath = saved.trigger.path ?? '';
  const baseUrl = savedTestUrl.slice(0, savedTestUrl.length - `/webhook-test/${savedPath}`.length);
  const path = normalizedPath(draft.trigger.path) ?? savedPath;
  // A schedule (SPEC 7f) has no URL, test listening, refusals, auth or alerts: only its own fields.
  const isSchedule = draft.trigger.type === 'schedule';
  const setTrigger = (patch: Partial<TriggerDraft>) =>
    setDraft({ ...draft, trigger: { ...draft.trigger, ...patch } });
  const state = publishState(saved);
  const testCurl = curlLine(
    fillParams(`${baseUrl}/webhook-test/${path}`),
    primaryMethod(draft.trigger.methods),
    draft.trigger.auth,
  );

  const triggerDetails = (
    <>
      <PanelHead id={`${headingId}-trigger-title`} onBack={wide ? undefined : closeSheet}>
        Trigger
      </PanelHead>
      {isSchedule ? null : (
        <>
          <UrlPanel
            baseUrl={baseUrl}
            path={path}
            methods={draft.trigger.methods}
            auth={draft.trigger.auth}
            active={saved.active}
            publishedVersion={saved.publishedVersion}
            listening={test.listener !== null}
            unsaved={dirty}
          />
          {canEdit && (
            <TestPanel
              test={test}
              testUrl={`${baseUrl}/webhook-test/${path}`}
              curl={testCurl}
              onListen={listen}
              busy={saving}
              savedNote={listenNote}
              draftVersion={saved.version}
            />
          )}
        </>
      )}
      <fieldset className="read-only-fields" disabled={!canEdit}>
        <TriggerPanel
          savedType={saved.trigger.type}
          trigger={draft.trigger}
          onChange={setTrigger}
          problems={problems}
          savedAuth={saved.trigger.auth}
          savedHandshakeToken={saved.trigger.handshakeToken}
        />
      </fieldset>
    </>
  );

  const found = selected === 'trigger' ? undefined : findStep(draft.steps, selected);
  const stepDetails = found && (
    <>
      <PanelHead id={`${headingId}-step-title`} onBack={wide ? undefined : closeSheet}>
        {STEP_TYPES.find((t) => t.type === found.step.type)?.label ?? found.step.type}
        <span className="muted"> · {found.step.name || `step ${found.index + 1}`}</span>
      </PanelHead>
      <Tabs
        label={`Step ${found.step.name}`}
        selected={stepTab}
        onSelect={(t) => setStepTab(t as 'settings' | 'output')}
        tabs={[
          {
            id: 'settings',
            label: 'Settings',
            content: (
              <fieldset className="read-only-fields" disabled={!canEdit}>
                <StepSettings
                  key={found.step.key}
                  headingId={`${headingId}-step-settings`}
                  step={found.step}
                  at={found.at}
                  index={found.index}
                  count={found.list.length}
                  place={found.place}
                  onChange={(patch) =>
                    setList(
                      found.list,
                      found.list.map((s, i) => (i === found.index ? ({ ...s, ...patch } as StepDraft) : s)),
                    )
                  }
                  onMove={(by) => {
                    const next = [...found.list];
                    const [step] = next.splice(found.index, 1);
                    next.splice(found.index + by, 0, step!);
                    setList(found.list, next);
                  }}
                  onRemove={() => removeStep(found.step.key)}
                  context={{ ...contextFor(found.at), workflowId: id }}
                  result={results?.[found.at]}
                  problems={problems.filter(
                    (p) => p.field === found.at || p.field.startsWith(`${found.at}/`),
                  )}
                  responseMode={draft.trigger.responseMode}
                />
              </fieldset>
            ),
          },
          {
            id: 'output',
            label: 'Last test output',
            content: <StepLastOutput result={results?.[found.at]} label={found.step.name} />,
          },
        ]}
      />
    </>
  );
  const panelTitle = found ? `${headingId}-step-title` : `${headingId}-trigger-title`;
  const deletingStep = deleting ? findStep(draft.steps, deleting) : undefined;

  return (
    <VariablesContext.Provider value={editorVariables}>
      <article className="editor" aria-labelledby={headingId}>
        <div className="editor-head">
          <div className="editor-title">
            <Link to="/" className="small muted back-link">
              ← Workflows
            </Link>
            <h1 id={headingId} className="visually-hidden">
              Workflow {draft.name}
            </h1>
            <label htmlFor={`${headingId}-name`} className="visually-hidden">
              Workflow name
            </label>
            <input
              id={`${headingId}-name`}
              data-field="/name"
              className="title-input"
              readOnly={!canEdit}
              value={draft.name}
              onChange={(e) => setDraft({ ...draft, name: e.target.value })}
            />
          </div>
          <div className="editor-actions">
            <div className={`state state-${state.kind}`} id={`${headingId}-state`}>
              {canEdit && (
                <Switch
                  checked={saved.active}
                  label="Activated"
                  disabled={toggling || saving}
                  describedBy={`${headingId}-state-detail`}
                  onChange={toggleActive}
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
                onClick={startPublish}
                disabled={saving || toggling || review !== null}
                aria-describedby={`${headingId}-state-detail`}
              >
                Publish
              </button>
            )}
            <Link to={`/executions?workflowId=${encodeURIComponent(id)}`} className="button">
              Executions
            </Link>
            <Link to={`/workflows/${encodeURIComponent(id)}/versions`} className="button">
              History
            </Link>
            {canEdit && (
              <button type="button" className="button primary" onClick={save} disabled={!dirty || saving}>
                {saving ? 'Saving…' : dirty ? 'Save' : 'Saved'}
              </button>
            )}
          </div>
        </div>
        <p className="small muted state-detail" id={`${headingId}-state-detail`}>
          {state.detail}
        </p>
        <Notice text={status} />
        <ErrorMessage
          error={activeError}
          title={saved.active ? 'Could not deactivate' : 'Could not activate'}
        />
        <ErrorMessage error={saveError} title="Not saved" onField={revealField} />
        {conflict && !saved.active && (
          <p className="notice warn-notice" role="status" data-testid="path-conflict-warning">
            Saved, but workflow{' '}
            <Link to={`/workflows/${encodeURIComponent(conflict.id)}`}>{conflict.name}</Link> is active on{' '}
            {conflict.methods.join(', ')} /webhook/{conflict.path}: this workflow cannot be activated on that
            path until that one is deactivated or this path or method changes.
          </p>
        )}
        <PublishDialog
          workflowId={id}
          review={review}
          onPublish={confirmPublish}
          onCancel={() => setReview(null)}
        />
        <ConfirmDialog
          open={leaving !== null}
          title="Leave with unsaved changes?"
          confirmLabel="Save and leave"
          cancelLabel="Stay"
          other={{
            label: 'Discard changes',
            danger: true,
            onClick: () => leaving && leaveNow(leaving.proceed),
          }}
          busy={leaving?.busy}
          onConfirm={saveAndLeave}
          onCancel={() => setLeaving(null)}
        >
          <p>Your changes to this workflow are not saved. Save them first, or leave and lose them.</p>
        </ConfirmDialog>
        <ConfirmDialog
          open={deletingStep !== undefined}
          title={`Remove step ${deletingStep?.step.name ?? ''}?`}
          confirmLabel="Remove"
          cancelLabel="Keep it"
          onConfirm={() => {
            const key = deleting;
            setDeleting(null);
            if (key) removeStep(key);
          }}
          onCancel={() => {
            const key = deleting;
            setDeleting(null);
            if (key) focusCard(key);
          }}
        >
          <p>The step and any steps it holds leave the draft (nothing is saved until you save).</p>
        </ConfirmDialog>

        <Tabs
          label="Workflow"
          selected={view}
          onSelect={(v) => setView(v as 'flow' | 'settings')}
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
                      selected={panelOpen && !found}
                      invalid={problems.some((p) => p.field.startsWith('/trigger'))}
                      nextRunAt={saved.trigger.type === 'schedule' ? saved.trigger.nextRunAt : undefined}
                      controls={panelOpen && !found ? `${headingId}-panel` : undefined}
                      onSelect={() => {
                        if (!wide) return openTrigger();
                        setSelected('trigger');
                        requestAnimationFrame(() =>
                          document.getElementById(`${headingId}-trigger-title`)?.focus(),
                        );
                      }}
                    />
                    <div className="area-steps">
                      <StepFlow
                        steps={draft.steps}
                        results={results}
                        names={names}
                        problems={problems}
                        selected={panelOpen ? found?.step.key : undefined}
                        controls={panelOpen ? `${headingId}-panel` : undefined}
                        onSelect={(key) => selectStep(key)}
                        onList={setList}
                        onAdded={(key) => selectStep(key)}
                        onDelete={setDeleting}
                      />
                    </div>
                  </div>
                  {wide ? (
                    <section id={`${headingId}-panel`} className="side-panel" aria-labelledby={panelTitle}>
                      {found ? stepDetails : triggerDetails}
                    </section>
                  ) : (
                    sheet && (
                      <Sheet id={`${headingId}-panel`} labelledBy={panelTitle} onClose={closeSheet}>
                        {found ? stepDetails : triggerDetails}
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
                <div className="settings-view">
                  <fieldset className="read-only-fields" disabled={!canEdit}>
                    <SettingsPanel
                      workflowId={id}
                      errorWorkflowId={draft.errorWorkflowId}
                      onChange={(errorWorkflowId) => setDraft({ ...draft, errorWorkflowId })}
                      searchFields={draft.searchFields}
                      onSearchFieldsChange={(searchFields) => setDraft({ ...draft, searchFields })}
                      fields={searchable}
                      problems={problems}
                      concurrency={draft.concurrency}
                      onConcurrencyChange={(concurrency) => setDraft({ ...draft, concurrency })}
                      expressionFields={triggerContext.fields}
                      scope={triggerContext.scope}
                    />
                  </fieldset>
                  {!isSchedule && (
                    <fieldset className="read-only-fields" disabled={!canEdit}>
                      <HealthPanel
                        workflowId={id}
                        alerts={draft.trigger}
                        onChange={setTrigger}
                        problems={problems}
                      />
                    </fieldset>
                  )}
                  <TestsPanel workflowId={id} />
                  {!isSchedule && <RejectionsPanel workflowId={id} />}
                </div>
              ),
            },
          ]}
        />
      </article>
    </VariablesContext.Provider>
  );
}

/** A side panel's (or sheet's) heading; on a sheet, with the button that goes back to the steps. */
function PanelHead({
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
