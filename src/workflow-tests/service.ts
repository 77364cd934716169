/**
 * Tests from captured traffic (SPEC 7g): made from an execution or a test event of the workflow
 * (its item, the recorded outputs of its effectful steps as mocks, its step outputs as the
 * expectation), edited, and run against the draft or the published version (runner.ts).
 */
import { AppError } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import type { StepResult } from '../engine/run.js';
import type { EngineOptions } from '../engine/types.js';
import type { Workflow } from '../model/workflow.js';
import { executionsRepo, isFinished } from '../store/executions.js';
import type { Store } from '../store/store.js';
import { testEventsRepo } from '../store/test-events.js';
import { type WorkflowTestRow, workflowTestsRepo } from '../store/workflow-tests.js';
import { workflowsRepo } from '../store/workflows.js';
import { capture, type Expectation, type Mocks } from './captured.js';
import { isEffectful, type TestRun, TestRunner } from './runner.js';

/** Tests one workflow may hold (a suite is run in one request). */
export const MAX_TESTS_PER_WORKFLOW = 100;

export interface WorkflowTest {
  id: string;
  workflowId: string;
  name: string;
  sourceExecutionId: string | null;
  item: unknown;
  mocks: Mocks;
  expected: Expectation;
  createdAt: string;
  updatedAt: string;
}

export interface SuiteRun {
  target: 'draft' | 'published';
  version: number;
  passed: number;
  failed: number;
  results: ({ testId: string; name: string } & TestRun)[];
}

export class WorkflowTests {
  readonly #store: Store;
  readonly #engineOptions: EngineOptions;
  #runner: TestRunner | undefined;

  constructor({ store, engine }: { store: Store; engine: EngineOptions }) {
    this.#store = store;
    this.#engineOptions = engine;
  }

  async create(
    workflowId: string,
    input: { name: string; fromExecutionId?: string; fromTestEventId?: string },
  ): Promise<WorkflowTest> {
    await this.#workflow(workflowId);
    const db = this.#store.db;
    if ((input.fromExecutionId === undefined) === (input.fromTestEventId === undefined)) {
      throw new AppError('validation_failed', 'Give exactly one of fromExecutionId and fromTestEventId.', {
        fields: [
          { field: '/fromExecutionId', message: 'needs exactly one of fromExecutionId or fromTestEventId' },
        ],
      });
    }
    let executionId = input.fromExecutionId;
    if (input.fromTestEventId !== undefined) {
      const event = await testEventsRepo.get(db, workflowId, input.fromTestEventId);
      if (!event) throw notFound('test event', input.fromTestEventId);
      if (!event.execution_id) {
        throw new AppError('validation_failed', 'This test event started no execution to make a test from.', {
          fields: [{ field: '/fromTestEventId', message: 'has no execution' }],
        });
      }
      executionId = event.execution_id;
    }
    const row = await executionsRepo.get(db, executionId!);
    if (!row || row.workflow_id !== workflowId) throw notFound('execution', executionId!);
    if (!isFinished(row.status) || row.status === 'skipped') {
      throw new AppError(
        'validation_failed',
        `The execution is ${row.status}: a test is made from one that ran to its end.`,
        {
          fields: [
            {
              field: input.fromTestEventId ? '/fromTestEventId' : '/fromExecutionId',
              message: `is ${row.status}`,
            },
          ],
        },
      );
    }
    if ((await workflowTestsRepo.list(db, workflowId)).length >= MAX_TESTS_PER_WORKFLOW) {
      throw new AppError('validation_failed', `A workflow holds at most ${MAX_TESTS_PER_WORKFLOW} tests.`, {
        hint: 'Delete a test you no longer need.',
      });
    }
    const item = JSON.parse(row.trigger) as unknown;
    const records = JSON.parse(row.steps) as StepResult[];
    const last = records.at(-1);
    const { mocks, expected } = capture(
      records,
      { status: row.status, output: last ? last.output : item },
      (type) => isEffectful(type),
    );
    const now = nowIso();
    const test: WorkflowTestRow = {
      id: newId(),
      workflow_id: workflowId,
      name: input.name,
      source_execution_id: row.id,
      item: row.trigger,
      mocks: JSON.stringify(mocks),
      expected: JSON.stringify(expected),
      created_at: now,
      updated_at: now,
    };
    await workflowTestsRepo.insert(db, test);
    return present(test);
  }

  async list(workflowId: string): Promise<WorkflowTest[]> {
    await this.#workflow(workflowId);
    return (await workflowTestsRepo.list(this.#store.db, workflowId)).map(present);
  }

  async get(workflowId: string, id: string): Promise<WorkflowTest> {
    const row = await workflowTestsRepo.get(this.#store.db, workflowId, id);
    if (!row) throw notFound('test', id);
    return present(row);
  }

  /** Edits what a test runs with and expects: the fields given replace the stored ones. */
  async update(
    workflowId: string,
    id: string,
    patch: { name?: string; item?: unknown; mocks?: Mocks; expected?: Expectation },
  ): Promise<WorkflowTest> {
    await this.get(workflowId, id);
    await workflowTestsRepo.update(this.#store.db, workflowId, id, {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.item !== undefined ? { item: JSON.stringify(patch.item) } : {}),
      ...(patch.mocks !== undefined ? { mocks: JSON.stringify(patch.mocks) } : {}),
      ...(patch.expected !== undefined ? { expected: JSON.stringify(patch.expected) } : {}),
      updated_at: nowIso(),
    });
    return this.get(workflowId, id);
  }

  async delete(workflowId: string, id: string): Promise<void> {
    if (!(await workflowTestsRepo.delete(this.#store.db, workflowId, id))) throw notFound('test', id);
  }

  /** Every test of the workflow against its draft or its published version, one after the other. */
  async run(workflowId: string, target: 'draft' | 'published'): Promise<SuiteRun> {
    const current = await this.#workflow(workflowId);
    let version: Workflow = current;
    if (target === 'published') {
      if (current.publishedVersion === null) {
        throw new AppError(
          'not_published',
          'This workflow has never been published: there is no published version to test.',
          {
            hint: 'Run the tests against the draft ({"target": "draft"}), or publish it first.',
          },
        );
      }
      if (current.publishedVersion !== current.version) {
        const published = await workflowsRepo.getVersion(
          this.#store.db,
          workflowId,
          current.publishedVersion,
        );
        if (published) version = published;
      }
    }
    this.#runner ??= new TestRunner(this.#engineOptions);
    const results: SuiteRun['results'] = [];
    for (const test of await this.list(workflowId)) {
      results.push({ testId: test.id, name: test.name, ...(await this.#runner.run(version, test)) });
    }
    const passed = results.filter((r) => r.status === 'passed').length;
    return { target, version: version.version, passed, failed: results.length - passed, results };
  }

  async #workflow(id: string): Promise<Workflow> {
    const workflow = await workflowsRepo.get(this.#store.db, id);
    if (!workflow) throw notFound('workflow', id);
    return workflow;
  }
}

function present(row: WorkflowTestRow): WorkflowTest {
  return {
    id: row.id,
    workflowId: row.workflow_id,
    name: row.name,
    sourceExecutionId: row.source_execution_id,
    item: JSON.parse(row.item) as unknown,
    mocks: JSON.parse(row.mocks) as Mocks,
    expected: JSON.parse(row.expected) as Expectation,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function notFound(what: string, id: string): AppError {
  return new AppError('not_found', `No ${what} ${id} here.`, {
    hint: what === 'test' ? 'GET /api/v1/workflows/:id/tests lists them.' : undefined,
  });
}
