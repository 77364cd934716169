import Type, { type TSchema } from 'typebox';
import { decodeCursor } from '../../ids.js';
import {
  type Workflow,
  WorkflowCreateSchema,
  WorkflowPatchSchema,
  WorkflowSchema,
} from '../../model/workflow.js';
import { decodeVersionCursor } from '../../workflows/service.js';
import { actorOf } from '../api-auth.js';
import type { App, HttpDeps } from '../deps.js';
import { presentWorkflow, presentWorkflowVersion } from '../present.js';
import { errors, IdParams, PageQuery, pageOf, routeSchema, VersionParams } from '../schemas.js';
import { auditContext } from '../audit-context.js';

/** One saved version (SPEC 7c): what the editor diffs against before publishing. */
const WorkflowVersionSchema = Type.Object({
  version: Type.Integer(),
  name: Type.String(),
  trigger: WorkflowSchema.properties.trigger,
  steps: WorkflowSchema.properties.steps,
  settings: WorkflowSchema.properties.settings,
  createdAt: Type.String(),
});

/** A row of the version history (SPEC 7c `GET /workflows/:id/versions`). */
const VersionItemSchema = Type.Object({
  version: Type.Integer(),
  createdAt: Type.String(),
  name: Type.String(),
  savedBy: Type.Union([Type.String(), Type.Null()], {
    description:
      'Who saved it: token "<name>" for an API token, the account\'s email for the UI; null when unknown (CLI imports, versions saved before hookflow recorded it).',
  }),
});

export function workflowRoutes(app: App, { workflows, config, rejections, triggerHealth }: HttpDeps): void {
  const auditOf = auditContext(config.http);
  // A schedule's nextRunAt comes from its live schedule: one read, only for schedule workflows.
  const presentAll = async (ws: Workflow[]) => {
    const scheduled = ws.filter((w) => w.trigger.type === 'schedule').map((w) => w.id);
    const live = scheduled.length > 0 ? await workflows.liveSchedules(scheduled) : new Map();
    return ws.map((w) => presentWorkflow(w, config.http.baseUrl, live.get(w.id)));
  };
  const present = async (w: Workflow) => (await presentAll([w]))[0]!;
  const tags = ['workflows'];

  app.post(
    '/workflows',
    {
      schema: routeSchema(tags, {
        body: WorkflowCreateSchema,
        response: { 201: WorkflowSchema, ...errors(400, 401) },
      }),
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await present(await workflows.create(req.body, undefined, actorOf(req), auditOf(req)))),
  );

  app.get(
    '/workflows',
    {
      schema: routeSchema(tags, {
        querystring: PageQuery,
        response: { 200: pageOf(WorkflowSchema), ...errors(400, 401) },
      }),
    },
    async (req) => {
      const page = await workflows.list(req.query.limit ?? 20, decodeCursor(req.query.cursor));
      return { items: await presentAll(page.items), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/workflows/:id',
    {
      schema: routeSchema(tags, { params: IdParams, response: { 200: WorkflowSchema, ...errors(401, 404) } }),
    },
    async (req) => await present(await workflows.get(req.params.id)),
  );

  app.get(
    '/workflows/:id/versions',
    {
      schema: routeSchema(tags, {
        summary: 'The saved versions of the workflow, newest first.',
        params: IdParams,
        querystring: PageQuery,
        response: { 200: pageOf(VersionItemSchema), ...errors(400, 401, 404) },
      }),
    },
    async (req) =>
      workflows.listVersions(req.params.id, req.query.limit ?? 20, decodeVersionCursor(req.query.cursor)),
  );

  app.post(
    '/workflows/:id/versions/:version/restore',
    {
      schema: routeSchema(tags, {
        summary:
          "Save that version's name, trigger, steps and settings as a new version (the draft); publish it separately.",
        params: VersionParams,
        response: { 200: WorkflowSchema, ...errors(400, 401, 404, 409) },
      }),
    },
    async (req) =>
      await present(await workflows.restore(req.params.id, req.params.version, actorOf(req), auditOf(req))),
  );

  app.get(
    '/workflows/:id/versions/:version',
    {
      schema: routeSchema(tags, {
        summary: 'One saved version of the workflow (secrets masked), e.g. the published one.',
        params: VersionParams,
        response: { 200: WorkflowVersionSchema, ...errors(400, 401, 404) },
      }),
    },
    async (req) =>
      presentWorkflowVersion(
        await workflows.getVersion(req.params.id, req.params.version),
        config.http.baseUrl,
      ),
  );

  /** A save (PUT: the whole workflow; PATCH: a merge patch of it): a new version, answered as GET shows it. */
  const save = <B extends TSchema>(body: B) => ({
    schema: routeSchema(tags, {
      params: IdParams,
      body,
      response: { 200: WorkflowSchema, ...errors(400, 401, 404, 409) },
    }),
  });
  app.put(
    '/workflows/:id',
    save(WorkflowCreateSchema),
    async (req) =>
      await present(await workflows.replace(req.params.id, req.body, actorOf(req), auditOf(req))),
  );
  app.patch(
    '/workflows/:id',
    save(WorkflowPatchSchema),
    async (req) => await present(await workflows.patch(req.params.id, req.body, actorOf(req), auditOf(req))),
  );

  app.delete(
    '/workflows/:id',
    { schema: routeSchema(tags, { params: IdParams, response: { 204: Type.Null(), ...errors(401, 404) } }) },
    async (req, reply) => {
      await workflows.delete(req.params.id, auditOf(req));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/workflows/:id/activate',
    {
      schema: routeSchema(tags, {
        summary: 'Serve the production URL, running the latest saved version (publishes it, like /publish).',
        params: IdParams,
        response: { 200: WorkflowSchema, ...errors(401, 404, 409) },
      }),
    },
    async (req) => await present(await workflows.activate(req.params.id, auditOf(req))),
  );

  app.post(
    '/workflows/:id/publish',
    {
      schema: routeSchema(tags, {
        summary:
          'Make the latest saved version (the draft) the one production runs, and activate the workflow.',
        params: IdParams,
        response: { 200: WorkflowSchema, ...errors(401, 404, 409) },
      }),
    },
    async (req) => await present(await workflows.publish(req.params.id, auditOf(req))),
  );

  app.post(
    '/workflows/:id/deactivate',
    {
      schema: routeSchema(tags, {
        summary:
          'Stop serving the production URL (publishedVersion is kept; activating again publishes the latest).',
        params: IdParams,
        response: { 200: WorkflowSchema, ...errors(401, 404) },
      }),
    },
    async (req) => await present(await workflows.deactivate(req.params.id, auditOf(req))),
  );

  app.get(
    '/workflows/:id/rejections',
    {
      schema: routeSchema(tags, {
        params: IdParams,
        description:
          "The last refused webhook calls of this workflow's trigger, newest first (up to 50; kept 7 days; no bodies or credentials).",
        response: {
          200: Type.Object({
            items: Type.Array(
              Type.Object({
                at: Type.String(),
                mode: Type.String(),
                code: Type.String(),
                message: Type.String(),
                method: Type.String(),
                ip: Type.String(),
              }),
            ),
          }),
          ...errors(401, 404),
        },
      }),
    },
    async (req) => {
      await workflows.get(req.params.id);
      return { items: await rejections.list(req.params.id) };
    },
  );

  app.get(
    '/workflows/:id/health',
    {
      schema: routeSchema(tags, {
        params: IdParams,
        description:
          "The trigger's health (SPEC 7g): the last accepted production call, production calls and refusals per hour over the last 24 hours, refusals by code, and the alerts raised (silence, rejections, schemaDrift).",
        response: {
          200: Type.Object({
            lastCallAt: Type.Union([Type.String(), Type.Null()]),
            callsLast24Hours: Type.Integer(),
            hours: Type.Array(
              Type.Object({ hour: Type.String(), calls: Type.Integer(), refusals: Type.Integer() }),
            ),
            refusalsByCode: Type.Record(Type.String(), Type.Integer()),
            alerts: Type.Array(
              Type.Object({
                kind: Type.String(),
                since: Type.String(),
                firedAt: Type.String(),
                lastSeen: Type.String(),
                details: Type.Unknown(),
                executionId: Type.Union([Type.String(), Type.Null()]),
              }),
            ),
          }),
          ...errors(401, 404),
        },
      }),
    },
    async (req) => {
      await workflows.get(req.params.id);
      return triggerHealth.report(req.params.id);
    },
  );
}
