/**
 * Which card is selected and where its details are: beside the flow from SIDE_PANEL's width, in a
 * full-screen sheet below it; the Flow or Settings view; moving focus as cards are chosen, removed,
 * or reached from an error summary's link.
 */
import { useCallback, useEffect, useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import type { Draft, StepDraft } from '../../lib/draft';
import { focusField } from '../../lib/focusField';
import { allSteps, findStep, replaceList } from '../../lib/lanes';
import { useMediaQuery } from '../../lib/useMediaQuery';
import { focusCard } from './StepFlow';

/** From this width the selected card's details sit beside the steps; below it they open as a sheet. */
const SIDE_PANEL = '(min-width: 1100px)';

const focusById = (id: string) => requestAnimationFrame(() => document.getElementById(id)?.focus());

export function useEditorPanel(
  headingId: string,
  draft: Draft | null,
  setDraft: (update: (d: Draft | null) => Draft | null) => void,
) {
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
  // Widened to the side panel: the sheet is not reopened by narrowing the window again.
  useEffect(() => {
    if (wide) setSheet(false);
  }, [wide]);

  const triggerTitle = `${headingId}-trigger-title`;
  const stepTitle = `${headingId}-step-title`;

  const selectTrigger = () => {
    setSelected('trigger');
    setSheet(true);
    focusById(triggerTitle);
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
  const selectStep = (key: string) => {
    setSelected(key);
    setStepTab('settings');
    if (!wide) {
      setSheet(true);
      focusById(stepTitle);
    } else focusCard(key);
  };
  /** An error summary's link: show the view and the card that hold the field, then focus it. */
  const revealField = (pointer: string) => {
    setView(pointer === '/settings' || pointer.startsWith('/settings/') ? 'settings' : 'flow');
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
  };

  /** One list of steps (the top level or a nested one, by identity) becomes `next`. */
  const setList = useCallback(
    (list: StepDraft[], next: StepDraft[]) =>
      setDraft((d) => d && { ...d, steps: replaceList(d.steps, list, next) }),
    [setDraft],
  );
  /** Removes a step; the card after it (or before it, or the trigger) is selected and focused. */
  const removeStep = (key: string) => {
    const found = draft && findStep(draft.steps, key);
    if (!draft || !found) return;
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
    if (next) focusCard(next);
    else focusById('flow-steps-title');
  };

  const found = selected === 'trigger' || !draft ? undefined : findStep(draft.steps, selected);
  const deletingStep = deleting && draft ? findStep(draft.steps, deleting) : undefined;
  /** Delete on a card asks first; keeping the step gives the focus back to its card. */
  const deleteDialog = (
    <ConfirmDialog
      open={deletingStep !== undefined}
      title={`Remove step ${deletingStep?.step.name ?? ''}?`}
      confirmLabel="Remove"
      cancelLabel="Keep it"
      onConfirm={() => {
        setDeleting(null);
        if (deleting) removeStep(deleting);
      }}
      onCancel={() => {
        setDeleting(null);
        if (deleting) focusCard(deleting);
      }}
    >
      <p>The step and any steps it holds leave the draft (nothing is saved until you save).</p>
    </ConfirmDialog>
  );
  return {
    view,
    setView,
    wide,
    sheet,
    /** The side panel is there, or the sheet is open. */
    panelOpen: wide || sheet,
    /** The selected step, with its list and place (undefined: the trigger is selected). */
    found,
    stepTab,
    setStepTab,
    /** Asks before removing a step (Delete on its card). */
    setDeleting,
    deleteDialog,
    triggerTitle,
    stepTitle,
    selectTrigger,
    /** On a wide screen, the trigger's details beside the flow; on a narrow one, its sheet. */
    chooseTrigger: () => {
      if (!wide) return selectTrigger();
      setSelected('trigger');
      focusById(triggerTitle);
    },
    closeSheet,
    selectStep,
    revealField,
    setList,
    removeStep,
  };
}

export type EditorPanel = ReturnType<typeof useEditorPanel>;
