/**
 * A dry run of the steps in the browser, against a test event: what each step would receive and
 * give, so expressions can be previewed and later steps can pick earlier outputs. `set`, `filter`,
 * `respond`, and the choices of `if`, `switch` and `forEach` are computed here as the engine would;
 * `http` and `code` do not run in the browser (one would send a request, the other runs in the
 * server's sandbox): their output comes from the last test run, when there is one.
 */
import { jsonEqual } from '../../../src/shared/json-equal';
import { responseHeaders } from '../../../src/shared/response-headers';
import { catalogLists } from '../../../src/shared/step-catalog';
import { stepLists } from '../../../src/shared/step-lists';
import type { Execution, ExecutionStep, Step } from '../types';
import { render, type Scope } from './expressions';
import type { StepRun } from './testRun';

export interface SimResult {
  output: unknown;
  error?: string;
  note?: string;
  /** What the last test run did with this step (lib/testRun.ts), set beside the preview by the editor. */
  lastRun?: StepRun;
  /** `if`/`switch`: the branch the event on screen takes (`then`, `else`, a case index, `default`). */
  branch?: 'then' | 'else' | 'default' | number;
  /** The step sits in a branch the event on screen does not take (its preview is what it would do). */
  notTaken?: boolean;
  /** `code`: the console lines of its last test run (the first iteration's, in a loop). */
  logs?: string[];
  /** The step would stop the run: a filter's false condition, a fail step (or one inside a branch). */
  stopped?: 'filtered' | 'failed';
}

export interface Simulation {
  /** What the expressions of top-level step i see. */
  scopes: Scope[];
  results: SimResult[];
  /**
   * Every step, nested ones included, by its JSON pointer (`/steps/0`, `/steps/1/then/0`,
   * `/steps/2/cases/1/steps/0`); inside a `forEach`, what its first element gives.
   */
  byPath: Record<string, { scope: Scope; result: SimResult }>;
}

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

/** Elements of a `forEach` previewed (the engine records the first 100 iterations in full too). */
const PREVIEW_ITERATIONS = 100;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function setOutput(fields: unknown, keepInput: unknown, input: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = keepInput === true && isObject(input) ? structuredClone(input) : {};
  for (const [name, value] of Object.entries(isObject(fields) ? fields : {})) {
    const segments = name.split('.');
    if (segments.some((s) => s === '' || FORBIDDEN.has(s))) continue;
    let node = out;
    for (const key of segments.slice(0, -1)) {
      const next = Object.hasOwn(node, key) ? node[key] : undefined;
      if (isObject(next)) node = next;
      else {
        const child: Record<string, unknown> = {};
        node[key] = child;
        node = child;
      }
    }
    node[segments[segments.length - 1]!] = value === undefined ? null : value;
  }
  return out;
}

/** The headers a respond step sends, by the engine's own rules. */
function respondHeaders(headers: unknown): Record<string, string> {
  return responseHeaders(isObject(headers) ? headers : {}, (_name, message) => {
    throw new Error(message);
  });
}

/** A condition's value as the engine reads it: true, or false/nothing; anything else is an error. */
function truth(value: unknown): boolean {
  if (value === true) return true;
  if (value === false || value === undefined || value === null) return false;
  throw new Error(`The condition must be true or false, but it gave ${JSON.stringify(value)}.`);
}

const recordKey = (name: string, type: string) => `${type}\u0000${name}`;

/**
 * The records of a test run by step name and type (names are unique in a workflow; the type must
 * match too, or an edited step would borrow another's output); in a loop, its first iteration's.
 */
export function recordsByName(steps: ExecutionStep[] | undefined, into = new Map<string, ExecutionStep>()) {
  for (const s of steps ?? []) {
    if (!into.has(recordKey(s.name, s.type))) into.set(recordKey(s.name, s.type), s);
    recordsByName(s.steps, into);
    recordsByName(s.iterations?.[0]?.steps, into);
  }
  return into;
}

/** A branch as words: the “then” branch, case 2, the default, no branch. */
export function branchWords(branch: SimResult['branch']): string {
  if (branch === 'then' || branch === 'else') return `the “${branch}” branch`;
  if (branch === 'default') return 'the default';
  if (typeof branch === 'number') return `case ${branch + 1}`;
  return 'no branch';
}

interface Ctx {
  trigger: unknown;
  run: Execution | undefined;
  records: Map<string, ExecutionStep>;
  execution: Scope['execution'];
  vars: Record<string, string>;
  byPath: Simulation['byPath'];
}

interface ListEnd {
  output: unknown;
  /** A filter stopped it, or a fail step would fail the run. */
  stopped?: 'filtered' | 'failed';
}

const stepList = (value: unknown): Step[] => (Array.isArray(value) ? (value.filter(isObject) as Step[]) : []);

/**
 * Every nested list of a step, where its type keeps them (shared/step-catalog.ts): the one at
 * `chosen` (a JSON pointer inside the step) taken as the step's own pass goes, with `outputs`;
 * the others previewed not taken, with a copy. The chosen list's end (the input going on when
 * none is chosen or the step has no such list).
 */
async function runLists(
  type: string,
  config: Record<string, unknown>,
  chosen: string | undefined,
  path: string,
  input: unknown,
  outputs: Record<string, unknown>,
  ctx: Ctx,
  pass: Pass,
): Promise<ListEnd> {
  let end: ListEnd = { output: input };
  for (const list of stepLists(config, catalogLists(type))) {
    const taken = list.field === chosen;
    const ran = await runList(
      stepList(list.steps),
      `${path}${list.field}`,
      input,
      taken ? outputs : { ...outputs },
      ctx,
      {
        ...pass,
        taken: pass.taken && taken,
      },
    );
    if (taken) end = ran;
  }
  return end;
}

/** How a list of steps is gone through. */
interface Pass {
  /** False: the list is previewed with the input it would get, marked not taken. */
  taken: boolean;
  /** Inside a forEach: the element ($item, $index) it runs for. */
  loop: { item: unknown; index: number } | undefined;
  /** Whether its steps' scopes and results are kept for the editor (a loop's first pass only). */
  keep: boolean;
}

/**
 * Runs a list of steps. `outputs` is `$steps` (shared with the caller for the branch that is taken;
 * a copy for one that is not, whose outputs no later step could see).
 */
async function runList(
  steps: Step[],
  at: string,
  start: unknown,
  outputs: Record<string, unknown>,
  ctx: Ctx,
  pass: Pass,
): Promise<ListEnd> {
  const { taken, loop, keep } = pass;
  let input = start;
  let stopped: ListEnd['stopped'];
  for (const [i, step] of steps.entries()) {
    const path = `${at}/${i}`;
    const { name, type, ...config } = step;
    const scope: Scope = {
      input,
      trigger: ctx.trigger,
      steps: { ...outputs },
      execution: ctx.execution,
      vars: ctx.vars,
    };
    if (loop) {
      scope.item = loop.item;
      scope.index = loop.index;
    }
    const recorded = ctx.records.get(recordKey(name, type));
    let result: SimResult;
    let end: ListEnd['stopped'];
    try {
      ({ result, end } = await runStep(type, config, scope, recorded, path, outputs, ctx, pass));
    } catch (err) {
      result = { output: null, error: (err as Error).message };
    }
    if (!taken) result.notTaken = true;
    if (end) result.stopped = end;
    // The server's path beside the preview's: when the last test run went another way (the draft
    // changed since, or a step the browser cannot run decided it), say which.
    if (ctx.run && recorded?.status === 'succeeded' && recorded.branch !== result.branch && !result.error)
      result.note =
        `${result.note ?? ''} In the last test run (v${ctx.run.workflowVersion}) it took ${branchWords(recorded.branch)}.`.trim();
    if (keep && !(path in ctx.byPath)) ctx.byPath[path] = { scope, result };
    Object.defineProperty(outputs, name, {
      value: result.output,
      enumerable: true,
      configurable: true,
      writable: true,
    });
    input = result.output;
    if (end && !stopped) stopped = end;
  }
  return { output: input, stopped };
}

async function runStep(
  type: string,
  config: Record<string, unknown>,
  scope: Scope,
  recorded: ExecutionStep | undefined,
  path: string,
  outputs: Record<string, unknown>,
  ctx: Ctx,
  pass: Pass,
): Promise<{ result: SimResult; end?: ListEnd['stopped'] }> {
  const { taken, loop, keep } = pass;
  const input = scope.input;
  const fromRun = (what: string): SimResult =>
    recorded
      ? recorded.status === 'failed'
        ? { output: null, note: 'It failed in the last test run: the error is above.' }
        : { output: recorded.output, note: `From the last test run: ${what}.` }
      : {
          output: null,
          note: `${what[0]!.toUpperCase()}${what.slice(1)}: run a test event to see this output.`,
        };
  switch (type) {
    case 'http':
      return { result: fromRun('HTTP requests are sent only by the server') };
    case 'code': {
      const result = fromRun('code runs on the server, in its sandbox');
      if (recorded?.logs && recorded.logs.length > 0) result.logs = recorded.logs;
      return { result };
    }
    case 'set': {
      const rendered = (await render(config, scope)) as Record<string, unknown>;
      return { result: { output: setOutput(rendered.fields, rendered.keepInput, input) } };
    }
    case 'filter': {
      const condition = await render(config.condition, scope);
      if (condition === true)
        return { result: { output: input, note: 'The condition is true: the run goes on.' } };
      if (condition === false || condition === undefined || condition === null)
        return {
          result: {
            output: null,
            note: loop
              ? 'The condition is false: this element would be dropped.'
              : 'The condition is false: the run would stop here (status filtered).',
          },
          end: 'filtered',
        };
      return {
        result: {
          output: null,
          error: `The condition must be true or false, but it gave ${JSON.stringify(condition)}.`,
        },
      };
    }
    case 'respond': {
      const rendered = (await render(config, scope)) as Record<string, unknown>;
      const body = 'body' in rendered ? rendered.body : input;
      return {
        result: {
          output: {
            status: rendered.status ?? 200,
            headers: respondHeaders(rendered.headers),
            body: body === undefined ? null : body,
          },
        },
      };
    }
    case 'wait': {
      const rendered = (await render({ seconds: config.seconds, until: config.until }, scope)) as {
        seconds?: unknown;
        until?: unknown;
      };
      const when =
        rendered.until !== undefined
          ? `until ${String(rendered.until)}`
          : `${String(rendered.seconds)} seconds`;
      return {
        result: { output: input, note: `The run would wait here (${when}), then go on with this input.` },
      };
    }
    case 'fail': {
      const message = await render(config.message, scope);
      return {
        result: {
          output: null,
          note: `The run would fail here: ${typeof message === 'string' ? message : JSON.stringify(message)}`,
        },
        end: 'failed',
      };
    }
    case 'if': {
      const branch = truth(await render(config.condition, scope)) ? 'then' : 'else';
      const chosen = await runLists(type, config, `/${branch}`, path, input, outputs, ctx, pass);
      return {
        result: {
          output: chosen.output,
          branch,
          note: `The event on screen takes the ${branch === 'then' ? '“then”' : '“else”'} branch.`,
        },
        end: chosen.stopped,
      };
    }
    case 'switch': {
      const cases = Array.isArray(config.cases) ? config.cases.filter(isObject) : [];
      let value: unknown;
      let rendered = false;
      let branch: number | 'default' | undefined;
      for (const [i, c] of cases.entries()) {
        if (Object.hasOwn(c, 'equals')) {
          if (!rendered) {
            value = await render(config.value, scope);
            rendered = true;
          }
          if (jsonEqual(value, c.equals)) {
            branch = i;
            break;
          }
        } else if (Object.hasOwn(c, 'when') && truth(await render(c.when, scope))) {
          branch = i;
          break;
        }
      }
      if (branch === undefined && Array.isArray(config.default)) branch = 'default';
      const list =
        branch === undefined ? undefined : branch === 'default' ? '/default' : `/cases/${branch}/steps`;
      const chosen = await runLists(type, config, list, path, input, outputs, ctx, pass);
      const shown = rendered ? ` (value ${JSON.stringify(value) ?? 'nothing'})` : '';
      return {
        result: {
          output: chosen.output,
          ...(branch === undefined ? {} : { branch }),
          note:
            branch === undefined
              ? `No case matches the event on screen${shown}: the step passes its input on.`
              : branch === 'default'
                ? `No case matches the event on screen${shown}: the default steps run.`
                : `The event on screen takes case ${branch + 1}${shown}.`,
        },
        end: chosen.stopped,
      };
    }
    case 'forEach': {
      const items = await render(config.items, scope);
      const steps = stepList(config.steps);
      // With no element to run on, the nested steps still get scopes (with no element, not taken) so
      // their fields can be edited.
      const previewEmpty = () =>
        runList(steps, `${path}/steps`, undefined, { ...outputs }, ctx, {
          taken: false,
          loop: { item: undefined, index: 0 },
          keep,
        });
      if (!Array.isArray(items)) {
        await previewEmpty();
        throw new Error(`The items must be a list, but they gave ${JSON.stringify(items) ?? 'nothing'}.`);
      }
      const out: unknown[] = [];
      if (items.length === 0) await previewEmpty();
      for (const [index, item] of items.slice(0, PREVIEW_ITERATIONS).entries()) {
        const end = await runList(steps, `${path}/steps`, item, index === 0 ? outputs : { ...outputs }, ctx, {
          taken,
          loop: { item, index },
          keep: keep && index === 0,
        });
        if (end.stopped === 'failed')
          return {
            result: { output: null, note: `Element ${index + 1} would fail the run.` },
            end: 'failed',
          };
        if (end.stopped !== 'filtered') out.push(end.output);
      }
      const more = items.length > PREVIEW_ITERATIONS ? ` (the first ${PREVIEW_ITERATIONS} previewed)` : '';
      return {
        result: {
          output: out,
          note: `${items.length} element${items.length === 1 ? '' : 's'}${more}; the steps inside show the first.`,
        },
      };
    }
    default:
      return {
        result: { output: recorded?.output ?? null, note: 'This step type is not previewed in the browser.' },
      };
  }
}

export async function simulate(
  steps: Step[],
  item: unknown,
  run: Execution | undefined,
  workflowId: string,
  /** `$vars`: the variables that are not secret. */
  vars: Record<string, string> = {},
): Promise<Simulation> {
  const ctx: Ctx = {
    trigger: item,
    run,
    records: recordsByName(run?.steps),
    execution: { id: 'preview', mode: 'test', workflowId, attempt: 1 },
    vars,
    byPath: {},
  };
  await runList(steps, '/steps', item, {}, ctx, { taken: true, loop: undefined, keep: true });
  const top = steps.map((_, i) => ctx.byPath[`/steps/${i}`]!);
  return { scopes: top.map((e) => e.scope), results: top.map((e) => e.result), byPath: ctx.byPath };
}
