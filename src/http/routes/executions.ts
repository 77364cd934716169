import Type from 'typebox';
import { decodeCursor } from '../../ids.js';
import { BACKLOG_COUNT_MAX } from '../../store/queue.js';
import type { App, HttpDeps } from '../deps.js';
import { presentExecution } from '../present.js';
import { errors, IdParams, PageQuery, pageOf, routeSchema } from '../schemas.js';

const StatusSchema = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('waiting'),
  Type.Literal('succeeded'),
  Type.Literal('failed'),
  Type.Literal('filtered'),
  Type.Literal('skipped'),
]);

/**
 * A step record (SPEC 7, 7b). Only name, type and status are always there; the other fields are
 * described for the OpenAPI document and passed through as recorded (additionalProperties: a
 * step type may add its own, e.g. `http`'s `request` and `attempts`).
 */
const StepRecordSchema = Type.Object(
  {
    name: Type.String(),
    type: Type.String(),
    status: Type.Union([
      Type.Literal('succeeded'),
      Type.Literal('failed'),
      Type.Literal('filtered'),
      Type.Literal('waiting'),
    ]),
    input: Type.Optional(Type.Unknown()),
    output: Type.Optional(Type.Unknown()),
    error: Type.Optional(Type.Unknown()),
    startedAt: Type.Optional(Type.String()),
    finishedAt: Type.Optional(Type.String()),
    branch: Type.Optional(
      Type.Union([Type.Literal('then'), Type.Literal('else'), Type.Literal('default'), Type.Integer()], {
        description:
          'if/switch: the branch that ran (then, else, the case index, default); absent when none did.',
      }),
    ),
    steps: Type.Optional(
      Type.Array(Type.Unknown(), {
        description: 'if/switch: the records of the steps that ran inside (this shape).',
      }),
    ),
    iterations: Type.Optional(
      Type.Array(
        Type.Object({
          index: Type.Integer(),
          status: Type.Union([
            Type.Literal('succeeded'),
            Type.Literal('filtered'),
            Type.Literal('failed'),
            Type.Literal('waiting'),
          ]),
          steps: Type.Array(Type.Unknown()),
        }),
        { description: 'forEach: the first 100 iterations with their step records.' },
      ),
    ),
    iterationCount: Type.Optional(Type.Integer({ description: 'forEach: how many iterations ran.' })),
    logs: Type.Optional(Type.Array(Type.String(), { description: 'code: the first 100 console.log lines.' })),
    childExecutionId: Type.Optional(
      Type.String({ description: 'workflow: the sub-workflow execution this step started.' }),
    ),
  },
  { additionalProperties: true },
);

/** SPEC 1: `error` runs an error workflow for a failed production execution (SPEC 7c), `alert` an alert workflow (SPEC 7g), `sub` a sub-workflow (SPEC 7f). */
const ModeSchema = Type.Union([
  Type.Literal('test'),
  Type.Literal('production'),
  Type.Literal('error'),
  Type.Literal('alert'),
  Type.Literal('sub'),
]);

const ExecutionSchema = Type.Object({
  id: Type.String(),
  workflowId: Type.String(),
  workflowVersion: Type.Integer(),
  mode: ModeSchema,
  status: StatusSchema,
  trigger: Type.Unknown(),
  steps: Type.Array(StepRecordSchema),
  error: Type.Unknown(),
  attempt: Type.Integer(),
  retryOf: Type.Union([Type.String(), Type.Null()], {
    description: 'A retry (POST /executions/{id}/retry): the execution it retried; null otherwise.',
  }),
  retries: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'GET /executions/{id} only: the executions that retry this one (their retryOf is its id), oldest first, up to 20, among the next 10 000 executions of its workflow.',
    }),
  ),
  errorExecutionId: Type.Union([Type.String(), Type.Null()], {
    description:
      'The execution of the error workflow this failed production execution started (settings.errorWorkflowId), or null.',
  }),
  parentExecutionId: Type.Union([Type.String(), Type.Null()], {
    description:
      "A sub-workflow execution (mode `sub`): the execution whose `workflow` step started it (that step's record has `childExecutionId`); null otherwise.",
  }),
  createdAt: Type.String(),
  startedAt: Type.Union([Type.String(), Type.Null()]),
  finishedAt: Type.Union([Type.String(), Type.Null()]),
  concurrencyKey: Type.Union([Type.String(), Type.Null()], {
    description:
      "The execution's concurrency key (settings.concurrency.key, evaluated when it was accepted), or null: it has none.",
  }),
  skipReason: Type.Union([Type.Literal('superseded'), Type.Null()], {
    description:
      '`skipped`: why no step ran. `superseded`: an execution of the same key with a newer settings.concurrency.newestWins value had started. null otherwise.',
  }),
  waitingFor: Type.Optional(
    Type.Union(
      [
        Type.Object({
          for: Type.Literal('call'),
          step: Type.String(),
          expiresAt: Type.String(),
          resumeUrl: Type.String(),
        }),
        Type.Object({
          for: Type.Literal('event'),
          step: Type.String(),
          expiresAt: Type.String(),
          workflowId: Type.String(),
          key: Type.String(),
        }),
        Type.Null(),
      ],
      {
        description:
          'GET /executions/:id only: what a `waiting` execution waits for (SPEC 7g) — a call to its `resumeUrl`, or a request of `workflowId` whose match gives `key` — until `expiresAt`; null when it waits for a time, or is not waiting.',
      },
    ),
  ),
  resumeAt: Type.Union([Type.String(), Type.Null()], {
    description:
      'While the execution is `waiting` (a wait step, or an http retry pausing a second or more): when it resumes (ISO-8601 UTC); null otherwise.',
  }),
});

const ListQuery = Type.Intersect([
  PageQuery,
  Type.Object({
    workflowId: Type.Optional(Type.String({ maxLength: 64 })),
    status: Type.Optional(StatusSchema),
    mode: Type.Optional(ModeSchema),
    where: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 512,
        description:
          "A field of the trigger item and its value, e.g. body.order_id=o-1 (the text of the value). A field the workflow declares searchable (settings.searchFields) is searched through an index: full pages, exact. Any other field: each request searches the next 10 000 executions (newest first), so a page may hold fewer than limit items; follow nextCursor until it is null. The answer's `search` says which.",
      }),
    ),
  }),
]);

/** The list, and with `where` how the search was answered (additive to the list's `{items, nextCursor}`). */
const ExecutionPage = Type.Object({
  ...pageOf(ExecutionSchema).properties,
  search: Type.Optional(
    Type.Object(
      {
        path: Type.String({ description: 'The field searched.' }),
        indexed: Type.Boolean({
          description:
            'true: through the index of a searchable field (settings.searchFields): full pages, exact over the executions written since it was declared. false: windowed (see where).',
        }),
        workflowIds: Type.Optional(
          Type.Array(Type.String(), { description: 'Indexed: the workflows whose index was searched.' }),
        ),
        window: Type.Optional(
          Type.Integer({ description: 'Not indexed: executions each request examined.' }),
        ),
        hint: Type.Optional(Type.String()),
      },
      { description: 'Only with where: how the search was answered.' },
    ),
  ),
});

export function executionRoutes(app: App, { executions }: HttpDeps): void {
  const tags = ['executions'];
  app.get(
    '/executions',
    {
      schema: routeSchema(tags, {
        querystring: ListQuery,
        response: { 200: ExecutionPage, ...errors(400, 401) },
      }),
    },
    async (req) =>
      executions.list(
        {
          workflowId: req.query.workflowId,
          status: req.query.status,
          mode: req.query.mode,
          before: decodeCursor(req.query.cursor),
          limit: req.query.limit ?? 20,
        },
        presentExecution,
        req.query.where,
      ),
  );

  app.get(
    '/executions/backlog',
    {
      schema: routeSchema(tags, {
        summary:
          'The backlog now: executions due and not taken by a worker, the oldest one, and those in flight on all workers.',
        response: {
          200: Type.Object({
            queued: Type.Integer({
              description: `Executions due and not taken by a worker: queued, and waiting ones whose time has come (counted up to ${BACKLOG_COUNT_MAX}).`,
            }),
            oldestQueuedAt: Type.Union([Type.String(), Type.Null()], {
              description: 'When the oldest of them became due (ISO-8601 UTC); null when none is.',
            }),
            inFlight: Type.Integer({
              description: 'Executions running now on all workers (computing, or waiting on the network).',
            }),
            at: Type.String({ description: 'When this was read (ISO-8601 UTC).' }),
          }),
          ...errors(401),
        },
      }),
    },
    async () => executions.backlog(),
  );

  app.get(
    '/executions/:id',
    {
      schema: routeSchema(tags, {
        params: IdParams,
        response: { 200: ExecutionSchema, ...errors(401, 404) },
      }),
    },
    async (req) => {
      const row = await executions.get(req.params.id);
      return {
        ...presentExecution(row),
        waitingFor: row.status === 'waiting' ? await executions.waitingFor(row.id) : null,
        retries: await executions.retriesOf(row),
      };
    },
  );

  const Started = Type.Object({ executionId: Type.String() });

  app.post(
    '/executions/:id/retry',
    {
      schema: routeSchema(tags, {
        summary: 'Run the same trigger item through the same workflow version again (linked by retryOf).',
        params: IdParams,
        response: { 202: Started, ...errors(401, 404) },
      }),
    },
    async (req, reply) => reply.code(202).send({ executionId: await executions.retry(req.params.id) }),
  );

  app.post(
    '/executions/:id/replay',
    {
      schema: routeSchema(tags, {
        summary:
          "Run the execution's stored trigger item (test or production) through the workflow's published version (production mode; the default) or its draft (test mode).",
        params: IdParams,
        body: Type.Object(
          { target: Type.Optional(Type.Union([Type.Literal('published'), Type.Literal('draft')])) },
          { additionalProperties: false },
        ),
        response: { 202: Started, ...errors(400, 401, 404, 409) },
      }),
      // No body (as before `target` existed) is `{}`: the published version. Fastify validates a
      // missing body as `undefined` whatever Type.Optional says, so it is filled in first.
      preValidation: (req, _reply, done) => {
        req.body ??= {};
        done();
      },
    },
    async (req, reply) =>
      reply
        .code(202)
        .send({ executionId: await executions.replay(req.params.id, req.body.target ?? 'published') }),
  );

  app.get('/files/:id', { schema: routeSchema(tags, { params: IdParams }) }, async (req, reply) => {
    const { row: file, stream } = await executions.file(req.params.id);
    const safeName = file.filename.replace(/[^\w.\- ]/g, '_');
    return (
      reply
        .type(file.mime_type)
        .header('content-length', file.size)
        .header('content-disposition', `attachment; filename="${safeName}"`)
        .header('x-content-sha256', file.sha256)
        // Never let a browser render an uploaded file as a page of this origin.
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        // Streamed part by part from the store (a 50 MB file is never held whole).
        .send(stream)
    );
  });
}
