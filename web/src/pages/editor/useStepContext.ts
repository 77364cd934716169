/**
 * What each step of the draft sees and gives on the test event on screen: the browser's dry run
 * (lib/simulate.ts) merged with what the last test run did with the step, and the fields the field
 * picker offers a step (the trigger's, earlier outputs, and inside a loop `$item`/`$index`).
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { api } from '../../api';
import { FIELD_PATH_PATTERN } from '../../../../src/shared/search-fields';
import type { PickerField } from '../../components/FieldPicker';
import { flattenValue, keyStep } from '../../lib/flatten';
import { typeOf } from '../../lib/format';
import { type SimResult, type Simulation, simulate } from '../../lib/simulate';
import { itemFields, walkSteps } from '../../lib/stepTree';
import type { StepRun } from '../../lib/testRun';
import { secretsAllowedIn, type Variable, varsOf } from '../../lib/variables';
import { triggerFields, under } from '../../lib/triggerFields';
import type { Execution, LearnedField, Step, TriggerItem } from '../../types';
import type { StepContext } from './StepSettings';

const SEARCHABLE_PATH = new RegExp(FIELD_PATH_PATTERN);

export function useStepContext({
  workflowId,
  steps,
  item,
  run,
  runs,
  learnedFields,
  canEdit,
}: {
  workflowId: string;
  steps: Step[] | undefined;
  /** The test event on screen. */
  item: TriggerItem | undefined;
  /** The last test run: http and code outputs the browser cannot compute come from it. */
  run: Execution | undefined;
  /** What the last test run did with each step, by JSON pointer. */
  runs: Record<string, StepRun>;
  learnedFields: LearnedField[];
  /** The variables are read by editors only (SPEC 11b); a viewer's previews find no $vars. */
  canEdit: boolean;
}) {
  const [sim, setSim] = useState<Simulation | undefined>();
  /** For the picker and previews. */
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
  useEffect(() => {
    if (!steps || !item) {
      setSim(undefined);
      return;
    }
    let cancelled = false;
    const timer = setTimeout(() => {
      simulate(steps, item, run, workflowId, vars).then((s) => !cancelled && setSim(s));
    }, 200);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [steps, item, run, workflowId, vars]);

  const learned = useMemo(() => triggerFields(learnedFields, item), [learnedFields, item]);
  /** The learned fields a search can index (scalars at a dotted path), for the Settings' picker. */
  const searchable = useMemo(
    () =>
      learned
        .filter((f) => SEARCHABLE_PATH.test(f.label) && !['object', 'array', 'null'].includes(f.type))
        .map((f) => ({ ...f, insert: f.label })),
    [learned],
  );

  const tree = useMemo(() => (steps ? walkSteps(steps) : []), [steps]);
  /** The variables for the expression fields, and where `$secrets` may be used. */
  const editorVariables = useMemo(
    () => ({ variables, secretsAllowed: secretsAllowedIn(tree) }),
    [variables, tree],
  );
  /** The preview of each step with the last test run's verdict beside it (a step may have either). */
  const results = useMemo(() => {
    const out: Record<string, SimResult> = {};
    for (const [at, entry] of Object.entries(sim?.byPath ?? {})) out[at] = entry.result;
    for (const [at, lastRun] of Object.entries(runs))
      out[at] = { ...(out[at] ?? { output: lastRun.output ?? null }), lastRun };
    return out;
  }, [sim, runs]);

  const contextFor = useCallback(
    (at: string): StepContext => {
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
      return { fields, scope: sim?.byPath[at]?.scope, workflowId };
    },
    [learned, tree, sim, workflowId],
  );
  /** What settings expressions see (the concurrency key): the trigger item, as the first step does. */
  const triggerContext = useMemo(() => contextFor('/steps/0'), [contextFor]);

  return { results, contextFor, triggerContext, searchable, editorVariables };
}
