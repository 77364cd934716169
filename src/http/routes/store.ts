/**
 * The data store (SPEC 7f): list a scope's entries, and read, write or delete one by key. The
 * `workflow` scope names its workflow with `?workflowId=`. Values are any JSON up to 256 KiB; keys
 * 1–512 characters. An expired entry answers 404 like an absent one.
 */
import Type from 'typebox';
import { AppError } from '../../errors.js';
import type { DataScope } from '../../store/data-store.js';
import { DATA_KEY_MAX_CHARS, DATA_TTL_MAX_SECONDS } from '../../shared/data-store.js';
import type { App, HttpDeps } from '../deps.js';
import { errors, pageOf, routeSchema } from '../schemas.js';

const ScopeSchema = Type.Union([Type.Literal('workflow'), Type.Literal('global')], {
  description: "`global`: shared by every workflow; `workflow`: one workflow's own (give `workflowId`).",
});

const EntrySchema = Type.Object({
  key: Type.String(),
  value: Type.Unknown(),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  updatedAt: Type.String({ format: 'date-time' }),
});

const WorkflowQuery = Type.Object({
  workflowId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});

const EntryParams = Type.Object({
  scope: ScopeSchema,
  // Checked by the service (1–512 characters), for a message that says so.
  key: Type.String(),
});

const ListQuery = Type.Object({
  scope: Type.Optional(ScopeSchema),
  workflowId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  prefix: Type.Optional(Type.String({ maxLength: DATA_KEY_MAX_CHARS })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 20 })),
  cursor: Type.Optional(Type.String({ maxLength: 4096 })),
});

const PutBody = Type.Object(
  {
    value: Type.Unknown({ description: 'Any JSON value, up to 256 KiB as JSON.' }),
    ttlSeconds: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: DATA_TTL_MAX_SECONDS,
        description: 'Expire after this many seconds.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The workflow a `workflow` scope needs, '' for `global`. */
function workflowOf(scope: DataScope, workflowId: string | undefined): string {
  if (scope === 'global') return '';
  if (!workflowId)
    throw new AppError(
      'validation_failed',
      'The workflow scope needs ?workflowId=<id>: each workflow has its own entries.',
      {
        fields: [{ field: '/workflowId', message: 'is required for the workflow scope' }],
      },
    );
  return workflowId;
}

export function storeRoutes(app: App, { dataStore }: HttpDeps): void {
  const tags = ['data store'];

  app.get(
    '/store',
    {
      schema: routeSchema(tags, {
        summary:
          "List a scope's entries (default `global`; `workflow` with `workflowId`), by key, optionally those starting with `prefix`.",
        querystring: ListQuery,
        response: { 200: pageOf(EntrySchema), ...errors(400, 401, 403) },
      }),
    },
    async (req) => {
      const scope = req.query.scope ?? 'global';
      return dataStore.list(
        { scope, workflowId: workflowOf(scope, req.query.workflowId), prefix: req.query.prefix },
        req.query.limit ?? 20,
        req.query.cursor || undefined,
      );
    },
  );

  app.get(
    '/store/:scope/:key',
    {
      schema: routeSchema(tags, {
        summary: 'One entry: `{key, value, expiresAt}`; 404 not_found when absent or expired.',
        params: EntryParams,
        querystring: WorkflowQuery,
        response: { 200: EntrySchema, ...errors(400, 401, 403, 404) },
      }),
    },
    async (req) =>
      dataStore.get({
        scope: req.params.scope,
        workflowId: workflowOf(req.params.scope, req.query.workflowId),
        key: req.params.key,
      }),
  );

  app.put(
    '/store/:scope/:key',
    {
      schema: routeSchema(tags, {
        summary:
          'Write an entry: `{"value": <JSON>, "ttlSeconds": N}` (the entry expires after ttlSeconds; none: kept).',
        params: EntryParams,
        querystring: WorkflowQuery,
        body: PutBody,
        response: { 200: EntrySchema, ...errors(400, 401, 403) },
      }),
    },
    async (req) =>
      dataStore.put(
        {
          scope: req.params.scope,
          workflowId: workflowOf(req.params.scope, req.query.workflowId),
          key: req.params.key,
        },
        req.body.value,
        req.body.ttlSeconds,
      ),
  );

  app.delete(
    '/store/:scope/:key',
    {
      schema: routeSchema(tags, {
        summary: 'Delete an entry; 404 not_found when absent or expired.',
        params: EntryParams,
        querystring: WorkflowQuery,
        response: { 204: Type.Null(), ...errors(400, 401, 403, 404) },
      }),
    },
    async (req, reply) => {
      await dataStore.delete({
        scope: req.params.scope,
        workflowId: workflowOf(req.params.scope, req.query.workflowId),
        key: req.params.key,
      });
      return reply.code(204).send(null);
    },
  );
}
