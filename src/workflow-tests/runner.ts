/**
 * Runs a test (SPEC 7g): the workflow version over the test's item on an engine whose effectful
 * step types (those neither pure, contained nor holding steps: `http`, `email`, `sql`, `wait`, and
 * any added later) answer with the recorded output of the same step run instead of acting — nothing
 * leaves the server, nothing is stored. A step run the test has no recording of fails, naming it.
 * Then every step run is compared with the expectation (JSON equality), with the run's status and
 * output.
 */
import { randomUUID } from 'node:crypto';
import type { TSchema } from 'typebox';
import { Engine, type RunResult } from '../engine/run.js';
import { STEP_TYPES, type StepRegistry } from '../engine/steps/index.js';
import { StepFailure, type StepContext, type StepType } from '../engine/steps/types.js';
import type { EngineOptions } from '../engine/types.js';
import type { Workflow } from '../model/workflow.js';
import { jsonEqual } from '../shared/json-equal.js';
import {
  type Expectation,
  keyedRecords,
  type Mocks,
  type RecordedStep,
  recorded,
  stepKey,
} from './captured.js';

/** Whether a step type acts outside the execution, so a test answers for it from a recording. */
export function isEffectful(type: string, types: StepRegistry = STEP_TYPES): boolean {
  const t = types.get(type);
  return t !== undefined && !t.pure && !t.contained && !(t.lists && t.lists.length > 0);
}

/** One step run compared: `same`, or how it differs (`missing`: expected, did not run; `added`: ran, not expected). */
export interface StepDiff {
  step: string;
  result: 'same' | 'changed' | 'missing' | 'added';
  expected?: RecordedStep;
  actual?: RecordedStep;
}

export interface TestRun {
  status: 'passed' | 'failed';
  /** The run's own status and error. */
  run: { status: string; error: unknown };
  steps: StepDiff[];
  /** Set when the run's status or output differ from the expectation. */
  outcome?: { expected: { status: string; output: unknown }; actual: { status: string; output: unknown } };
}

export class TestRunner {
  readonly #engine: Engine;
  /** The mocks of the runs in progress, by their made-up execution id. */
  readonly #mocks = new Map<string, Mocks>();

  constructor(options: EngineOptions) {
    this.#engine = new Engine({ ...options, stepTypes: this.#mockedTypes() });
  }

  async run(
    workflow: Workflow,
    test: { item: unknown; mocks: Mocks; expected: Expectation },
  ): Promise<TestRun> {
    const executionId = `test-${randomUUID()}`;
    this.#mocks.set(executionId, test.mocks);
    let result: RunResult;
    try {
      result = await this.#engine.run(workflow, test.item, { executionId, mode: 'test' });
    } finally {
      this.#mocks.delete(executionId);
    }
    return compare(test.expected, result, test.item);
  }

  /** The built-in types, the effectful ones answering from the run's mocks. */
  #mockedTypes(): StepRegistry {
    const types = new Map<string, StepType<TSchema>>();
    for (const [name, type] of STEP_TYPES) {
      types.set(name, isEffectful(name) ? { ...type, run: (_config, ctx) => this.#answer(ctx) } : type);
    }
    return types;
  }

  #answer(ctx: StepContext): { output: unknown } {
    const key = stepKey(ctx.step ?? '', ctx.indices);
    const mocks = this.#mocks.get(ctx.scope?.execution.id ?? '') ?? {};
    const mock = Object.hasOwn(mocks, key) ? mocks[key] : undefined;
    if (!mock) {
      throw new StepFailure(
        `The test has no recorded output for step "${key}": a test sends nothing out. Add its output to the test's mocks, or make the test again from an execution that ran this step.`,
      );
    }
    if (mock.status === 'failed') {
      throw new StepFailure(mock.error?.message ?? `Step "${key}" failed when it was recorded.`, {
        output: mock.output,
      });
    }
    return { output: mock.output };
  }
}

function compare(expected: Expectation, result: RunResult, item: unknown): TestRun {
  const actual = new Map([...keyedRecords(result.steps)].map(([key, r]) => [key, recorded(r)]));
  const steps: StepDiff[] = [];
  for (const [key, want] of Object.entries(expected.steps)) {
    const got = actual.get(key);
    if (!got) steps.push({ step: key, result: 'missing', expected: want });
    else if (sameRun(want, got)) steps.push({ step: key, result: 'same' });
    else steps.push({ step: key, result: 'changed', expected: want, actual: got });
  }
  for (const [key, got] of actual) {
    if (!Object.hasOwn(expected.steps, key)) steps.push({ step: key, result: 'added', actual: got });
  }
  const output = result.steps.length === 0 ? item : (result.output ?? null);
  const sameOutcome = expected.status === result.status && jsonEqual(expected.output, output);
  const passed = sameOutcome && steps.every((s) => s.result === 'same');
  return {
    status: passed ? 'passed' : 'failed',
    run: { status: result.status, error: result.error },
    steps,
    ...(sameOutcome
      ? {}
      : {
          outcome: {
            expected: { status: expected.status, output: expected.output },
            actual: { status: result.status, output },
          },
        }),
  };
}

function sameRun(a: RecordedStep, b: RecordedStep): boolean {
  return (
    a.status === b.status &&
    jsonEqual(a.output, b.output) &&
    (a.error?.message ?? null) === (b.error?.message ?? null)
  );
}
