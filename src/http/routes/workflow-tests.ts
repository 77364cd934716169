/** Tests from captured traffic (SPEC 7g): make, list, edit, delete, and run them. */
import Type from 'typebox';
import type { App, HttpDeps } from '../deps.js';
import { errors, IdParams, routeSchema } from '../schemas.js';

const RecordedStepSchema = Type.Object({
  status: Type.String({ maxLength: 32 }),
  output: Type.Unknown(),
  error: Type.Optional(
    Type.Union([Type.Object({ message: Type.String() }, { additionalProperties: true }), Type.Null()]),
  ),
});

const MocksSchema = Type.Record(Type.String({ maxLength: 1024 }), RecordedStepSchema, {
  description:
    'Recorded outputs of the effectful steps (http, email, sql, wait…) by step run: the name, then forEach indices (`notify.2`).',
});

const ExpectationSchema = Type.Object(
  {
    status: Type.String({ maxLength: 32 }),
    output: Type.Unknown(),
    steps: Type.Record(Type.String({ maxLength: 1024 }), RecordedStepSchema),
  },
  { additionalProperties: false },
);

const TestSchema = Type.Object({
  id: Type.String(),
  workflowId: Type.String(),
  name: Type.String(),
  sourceExecutionId: Type.Union([Type.String(), Type.Null()]),
  item: Type.Unknown(),
  mocks: MocksSchema,
  expected: ExpectationSchema,
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

const TestParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  testId: Type.String({ minLength: 1, maxLength: 64 }),
});

const StepDiffSchema = Type.Object({
  step: Type.String(),
  result: Type.Union([
    Type.Literal('same'),
    Type.Literal('changed'),
    Type.Literal('missing'),
    Type.Literal('added'),
  ]),
  expected: Type.Optional(RecordedStepSchema),
  actual: Type.Optional(RecordedStepSchema),
});

const OutcomeSchema = Type.Object({ status: Type.String(), output: Type.Unknown() });

const SuiteRunSchema = Type.Object({
  target: Type.Union([Type.Literal('draft'), Type.Literal('published')]),
  version: Type.Integer(),
  passed: Type.Integer(),
  failed: Type.Integer(),
  results: Type.Array(
    Type.Object({
      testId: Type.String(),
      name: Type.String(),
      status: Type.Union([Type.Literal('passed'), Type.Literal('failed')]),
      run: Type.Object({ status: Type.String(), error: Type.Unknown() }),
      steps: Type.Array(StepDiffSchema),
      outcome: Type.Optional(Type.Object({ expected: OutcomeSchema, actual: OutcomeSchema })),
    }),
  ),
});

export function workflowTestRoutes(app: App, { workflowTests }: HttpDeps): void {
  const tags = ['tests'];

  app.post(
    '/workflows/:id/tests',
    {
      schema: routeSchema(tags, {
        summary:
          "Make a test from an execution or a test event of this workflow: its trigger item, its effectful steps' recorded outputs as mocks, and every step's output as the expectation.",
        params: IdParams,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 256 }),
            fromExecutionId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
            fromTestEventId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: TestSchema, ...errors(400, 401, 404) },
      }),
    },
    async (req, reply) => reply.code(201).send(await workflowTests.create(req.params.id, req.body)),
  );

  app.get(
    '/workflows/:id/tests',
    {
      schema: routeSchema(tags, {
        params: IdParams,
        response: { 200: Type.Object({ items: Type.Array(TestSchema) }), ...errors(401, 404) },
      }),
    },
    async (req) => ({ items: await workflowTests.list(req.params.id) }),
  );

  app.post(
    '/workflows/:id/tests/run',
    {
      schema: routeSchema(tags, {
        summary:
          'Run every test against the draft or the published version, effects answered by their mocks: nothing leaves the server, nothing is stored. Each test passed or failed, with a diff per step.',
        params: IdParams,
        body: Type.Object(
          { target: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('published')])) },
          { additionalProperties: false },
        ),
        response: { 200: SuiteRunSchema, ...errors(400, 401, 404, 409) },
      }),
    },
    async (req) => workflowTests.run(req.params.id, req.body?.target ?? 'published'),
  );

  app.get(
    '/workflows/:id/tests/:testId',
    {
      schema: routeSchema(tags, {
        params: TestParams,
        response: { 200: TestSchema, ...errors(401, 404) },
      }),
    },
    async (req) => workflowTests.get(req.params.id, req.params.testId),
  );

  app.put(
    '/workflows/:id/tests/:testId',
    {
      schema: routeSchema(tags, {
        summary: 'Edit the test: the fields sent (name, item, mocks, expected) replace the stored ones.',
        params: TestParams,
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
            item: Type.Optional(Type.Unknown()),
            mocks: Type.Optional(MocksSchema),
            expected: Type.Optional(ExpectationSchema),
          },
          { additionalProperties: false },
        ),
        response: { 200: TestSchema, ...errors(400, 401, 404) },
      }),
    },
    async (req) => workflowTests.update(req.params.id, req.params.testId, req.body),
  );

  app.delete(
    '/workflows/:id/tests/:testId',
    {
      schema: routeSchema(tags, {
        params: TestParams,
        response: { 204: Type.Null(), ...errors(401, 404) },
      }),
    },
    async (req, reply) => {
      await workflowTests.delete(req.params.id, req.params.testId);
      return reply.code(204).send(null);
    },
  );
}
