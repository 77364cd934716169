/**
 * A dry run of the steps in the browser, against a test event: what each step would receive and
 * give, so expressions can be previewed and later steps can pick earlier outputs. `set`, `filter`
 * and `respond` are computed here exactly as the engine would; `http` does not run in the browser
 * (it would send a request): its output comes from the last test run, when there is one.
 */
import { responseHeaders } from '../../../src/shared/response-headers';
import type { Execution, ExecutionError, Step } from '../types';
import { render, type Scope } from './expressions';

export interface SimResult {
  output: unknown;
  error?: string;
  note?: string;
  /** What the last test run (of the event on screen) did with this step, when it failed or never got to it. */
  lastRun?: { executionId: string; version: number; failed?: ExecutionError; notRun?: boolean };
}

const FINISHED = new Set(['succeeded', 'failed', 'filtered']);

export interface Simulation {
  /** What the expressions of step i see. */
  scopes: Scope[];
  results: SimResult[];
}

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

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

export async function simulate(
  steps: Step[],
  item: unknown,
  run: Execution | undefined,
  workflowId: string,
): Promise<Simulation> {
  const outputs: Record<string, unknown> = {};
  const scopes: Scope[] = [];
  const results: SimResult[] = [];
  const execution = { id: 'preview', mode: 'test', workflowId, attempt: 1 };
  let input = item;
  for (const step of steps) {
    const { name, type, ...config } = step;
    const scope: Scope = { input, trigger: item, steps: { ...outputs }, execution };
    scopes.push(scope);
    const recorded = run?.steps.find((s) => s.name === name && s.type === type);
    let result: SimResult;
    try {
      if (type === 'http') {
        result = recorded
          ? recorded.status === 'failed'
            ? { output: null, note: 'It failed in the last test run: the error is above.' }
            : {
                output: recorded.output,
                note: 'From the last test run: HTTP requests are sent only by the server.',
              }
          : {
              output: null,
              note: 'HTTP requests are sent only by the server: run a test event to see this output.',
            };
      } else if (type === 'set') {
        const rendered = (await render(config, scope)) as Record<string, unknown>;
        result = { output: setOutput(rendered.fields, rendered.keepInput, input) };
      } else if (type === 'filter') {
        const { condition } = (await render(config, scope)) as Record<string, unknown>;
        result =
          condition === true
            ? { output: input, note: 'The condition is true: the run goes on.' }
            : condition === false || condition === undefined || condition === null
              ? { output: null, note: 'The condition is false: the run would stop here (status filtered).' }
              : {
                  output: null,
                  error: `The condition must be true or false, but it gave ${JSON.stringify(condition)}.`,
                };
      } else if (type === 'respond') {
        const rendered = (await render(config, scope)) as Record<string, unknown>;
        const body = 'body' in rendered ? rendered.body : input;
        result = {
          output: {
            status: rendered.status ?? 200,
            headers: respondHeaders(rendered.headers),
            body: body === undefined ? null : body,
          },
        };
      } else {
        result = {
          output: recorded?.output ?? null,
          note: 'This step type is not previewed in the browser.',
        };
      }
    } catch (err) {
      result = { output: null, error: (err as Error).message };
    }
    // The server's verdict beside the preview: a step that failed in the last test run is shown
    // failed where it is, with its error (issue 17 #4), whatever the browser's dry run says.
    if (run && recorded?.status === 'failed')
      result.lastRun = {
        executionId: run.id,
        version: run.workflowVersion,
        failed: recorded.error ?? { message: 'The step failed.' },
      };
    else if (run && !recorded && FINISHED.has(run.status) && run.status !== 'succeeded')
      result.lastRun = { executionId: run.id, version: run.workflowVersion, notRun: true };
    results.push(result);
    Object.defineProperty(outputs, name, {
      value: result.output,
      enumerable: true,
      configurable: true,
      writable: true,
    });
    input = result.output;
  }
  return { scopes, results };
}
