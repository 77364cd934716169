/**
 * Steps holding steps (StepType.lists: `if`, `switch`, `forEach`): the step's `run` says which of
 * its lists runs (`branch`) or the elements to run its first list for (`each`); the lists run
 * with the step loop (run.ts, handed in as `Loop`), records nest (`steps`; `iterations`, the first
 * MAX_RECORDED_ITERATIONS, with `iterationCount`), and a park inside is placed in the frames of the
 * checkpoint. The step's output is its list's (an `each`: every iteration's, gathered).
 */
import { nowIso } from '../ids.js';
import { defineEntry } from './expressions.js';
import { andThen, isPromise, type MaybePromise } from '../shared/maybe-promise.js';
import { branchOf } from '../shared/step-lists.js';
import type { Frame } from './checkpoint.js';
import type { CompiledList, Node } from './compile.js';
import { checkDeadline, stepError } from './errors.js';
import type { StepContext, StepOutcome } from './steps/types.js';
import type { Branch, End, IterationResult, Run, StepResult } from './types.js';

/** Iterations of a loop recorded in full; `iterationCount` counts them all. */
export const MAX_RECORDED_ITERATIONS = 100;

/** What a step holding steps needs of the step loop. */
export interface Loop {
  /** Runs a step list (resuming: from its frame at `depth`). */
  list(nodes: Node[], records: StepResult[], input: unknown, run: Run, depth: number): MaybePromise<End>;
  /** The context a step's `run` gets. */
  context(node: Node, run: Run, resume: { state: unknown } | undefined): StepContext;
}

/** A loop's position: the elements, the iteration, and the outputs gathered so far. */
type Each = NonNullable<Frame['each']>;

/**
 * Runs a step holding steps at `depth` (resuming: from its frame, the branch or iteration it
 * stood in), recording into `records`.
 */
export function runHolder(
  node: Node,
  records: StepResult[],
  input: unknown,
  run: Run,
  depth: number,
  loop: Loop,
): MaybePromise<End> {
  const { step } = node;
  const frame = run.resumeAt?.[depth];
  let record: StepResult;
  if (frame) {
    // Resuming inside it: its record (with the nested records so far) is the last one.
    record = records[records.length - 1]!;
  } else {
    record = {
      name: step.name,
      type: step.type,
      status: 'succeeded',
      input,
      output: null,
      error: null,
      startedAt: nowIso(),
      finishedAt: '',
    };
    records.push(record);
  }
  const at: At = { node, record, input, run, depth, loop };
  const ended = andThen(
    frame,
    (f): MaybePromise<End> => {
      checkDeadline(run, Date.now());
      if (f) return f.each ? runEach(at, f.each) : runBranch(at, f.branch, input);
      run.scope.input = input;
      const ctx = loop.context(node, run, undefined);
      return andThen(node.type.run(node.config, ctx), (outcome: StepOutcome) => {
        if (outcome.each) {
          record.iterations = [];
          record.iterationCount = 0;
          return runEach(at, { index: 0, items: outcome.each, outputs: [] });
        }
        const branch = outcome.branch === undefined ? undefined : (branchOf(outcome.branch) as Branch);
        return runBranch(at, branch, outcome.output);
      });
    },
    (err): End => ({ end: 'failed', error: stepError(err, step.name, run) }),
  );
  return andThen(ended, (end) => finish(end, record, run));
}

interface At {
  node: Node;
  record: StepResult;
  input: unknown;
  run: Run;
  depth: number;
  loop: Loop;
}

/** The list named `branch`, on the step's input; none (or one the step leaves out): `output` goes on. */
function runBranch(
  { node, record, input, run, depth, loop }: At,
  branch: Branch | undefined,
  output: unknown,
) {
  if (branch !== undefined) record.branch = branch;
  record.steps ??= [];
  const list = branch === undefined ? undefined : listOf(node, branch);
  if (!list) return { end: 'done', output } satisfies End;
  return andThen(loop.list(list.nodes, record.steps, input, run, depth + 1), (end) => {
    if (end.end === 'parked') end.at.unshift({ i: 0, branch: branch! });
    return end;
  });
}

function listOf(node: Node, branch: Branch): CompiledList | undefined {
  return node.lists?.find((l) => branchOf(l.field) === branch);
}

/** The step's first list once per element from `each.index` on, with `$item` and `$index`. */
function runEach(at: At, each: Each): MaybePromise<End> {
  const { record, run } = at;
  record.iterations ??= [];
  const scope = run.scope;
  // An inner loop's $item/$index shadow the outer one's, which come back when it ends.
  const outer = { item: scope.item, index: scope.index };
  const level = run.indices.length;
  const restore = () => {
    scope.item = outer.item;
    scope.index = outer.index;
    run.indices.length = level;
  };
  return andThen(
    each,
    (e) =>
      andThen(iterate(at, e, e.index, level), (end) => {
        restore();
        return end;
      }),
    (err) => {
      restore();
      throw err;
    },
  );
}

/** Iterations from `index` on: at once while each ends at once, else the rest after the one that waits. */
function iterate(at: At, each: Each, index: number, level: number): MaybePromise<End> {
  const { node, record, run, depth, loop } = at;
  const { items, outputs } = each;
  const iterations = record.iterations!;
  const list = node.lists?.[0];
  const start = index;
  for (; index < items.length; index++) {
    const element = items[index];
    run.scope.item = element;
    run.scope.index = index;
    run.indices[level] = index;
    let iteration: IterationResult;
    const resuming = run.resumeAt !== undefined && index === start;
    const kept = index < MAX_RECORDED_ITERATIONS;
    if (resuming && kept && iterations[iterations.length - 1]?.index === index) {
      iteration = iterations[iterations.length - 1]!;
    } else {
      iteration = { index, status: 'succeeded', steps: [] };
      if (kept) iterations.push(iteration);
    }
    record.iterationCount = index + 1;
    const i = index;
    const ended = andThen(
      list
        ? loop.list(list.nodes, iteration.steps, element, run, depth + 1)
        : { end: 'done', output: element },
      (end: End) => iterationEnd(end, iteration, i, each),
    );
    if (isPromise(ended)) return ended.then((end) => end ?? iterate(at, each, i + 1, level));
    if (ended) return ended;
  }
  return { end: 'done', output: outputs };
}

/** An iteration's end: undefined when the loop goes on, else the loop's end. */
function iterationEnd(end: End, iteration: IterationResult, index: number, each: Each): End | undefined {
  switch (end.end) {
    case 'done':
      iteration.status = 'succeeded';
      each.outputs.push(end.output);
      return undefined;
    case 'filtered':
      // A filter inside a loop drops the element: the iteration ends, adding nothing.
      iteration.status = 'filtered';
      return undefined;
    case 'failed':
      iteration.status = 'failed';
      return end;
    case 'parked':
      iteration.status = 'waiting';
      end.at.unshift({ i: 0, each: { index, items: each.items, outputs: each.outputs } });
      return end;
  }
}

/** The holding step's record from how it ended. */
function finish(end: End, record: StepResult, run: Run): End {
  record.finishedAt = nowIso();
  switch (end.end) {
    case 'done':
      record.status = 'succeeded';
      record.output = end.output;
      defineEntry(run.outputs, record.name, end.output);
      break;
    case 'filtered':
      record.status = 'filtered';
      break;
    case 'failed':
      record.status = 'failed';
      record.error = end.error;
      break;
    case 'parked':
      record.status = 'waiting';
      break;
  }
  return end;
}
