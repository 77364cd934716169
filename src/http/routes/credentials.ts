/** Credentials (SPEC 7c): CRUD; `data` is write-only (answers show each value as "***"). */
import Type from 'typebox';
import { CredentialCreateSchema, CredentialPatchSchema, CredentialSchema } from '../../credentials/model.js';
import { decodeCursor } from '../../ids.js';
import type { App, HttpDeps } from '../deps.js';
import { errors, IdParams, PageQuery, pageOf, routeSchema } from '../schemas.js';
import { auditContext } from '../audit-context.js';

export function credentialRoutes(app: App, { credentials, config }: HttpDeps): void {
  const auditOf = auditContext(config.http);
  const tags = ['credentials'];

  app.post(
    '/credentials',
    {
      schema: routeSchema(tags, {
        summary:
          'Store a credential for http steps ("credential": "<id>"): bearer {token}, header {name, value}, basic {username, password}, query {name, value}. Sealed at rest; never returned.',
        body: CredentialCreateSchema,
        response: { 201: CredentialSchema, ...errors(400, 401) },
      }),
    },
    async (req, reply) => reply.code(201).send(await credentials.create(req.body, auditOf(req))),
  );

  app.get(
    '/credentials',
    {
      schema: routeSchema(tags, {
        querystring: PageQuery,
        response: { 200: pageOf(CredentialSchema), ...errors(400, 401) },
      }),
    },
    async (req) => credentials.list(req.query.limit ?? 20, decodeCursor(req.query.cursor)),
  );

  app.get(
    '/credentials/:id',
    {
      schema: routeSchema(tags, {
        params: IdParams,
        response: { 200: CredentialSchema, ...errors(401, 404) },
      }),
    },
    async (req) => credentials.get(req.params.id),
  );

  app.patch(
    '/credentials/:id',
    {
      schema: routeSchema(tags, {
        summary:
          'Rename and/or rotate: the data fields sent replace the stored ones (fields left out or sent as "***" are kept). Every workflow naming it uses the new values from its next run.',
        params: IdParams,
        body: CredentialPatchSchema,
        response: { 200: CredentialSchema, ...errors(400, 401, 404) },
      }),
    },
    async (req) => credentials.update(req.params.id, req.body, auditOf(req)),
  );

  app.delete(
    '/credentials/:id',
    {
      schema: routeSchema(tags, {
        summary:
          "Delete it; 409 credential_in_use while an http step of a workflow's draft or published version names it.",
        params: IdParams,
        response: { 204: Type.Null(), ...errors(401, 404, 409) },
      }),
    },
    async (req, reply) => {
      await credentials.delete(req.params.id, auditOf(req));
      return reply.code(204).send(null);
    },
  );
}
