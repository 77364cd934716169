/**
 * Variables (SPEC 7e): `GET /variables`, `GET|PUT|DELETE /variables/:name`. A secret variable's
 * value is write-only: every answer shows it as "***".
 */
import Type from 'typebox';
import { VariableNameSchema, VariablePutSchema, VariableSchema } from '../../variables/service.js';
import type { App, HttpDeps } from '../deps.js';
import { errors, routeSchema } from '../schemas.js';
import { auditContext } from '../audit-context.js';

const NameParams = Type.Object({ name: VariableNameSchema });

export function variableRoutes(app: App, { variables, config }: HttpDeps): void {
  const auditOf = auditContext(config.http);
  const tags = ['variables'];

  app.get(
    '/variables',
    {
      schema: routeSchema(tags, {
        summary: 'Every variable, by name; secret values as "***".',
        response: { 200: Type.Object({ items: Type.Array(VariableSchema) }), ...errors(401) },
      }),
    },
    async () => ({ items: await variables.list() }),
  );

  app.get(
    '/variables/:name',
    {
      schema: routeSchema(tags, {
        params: NameParams,
        response: { 200: VariableSchema, ...errors(400, 401, 404) },
      }),
    },
    async (req) => variables.get(req.params.name),
  );

  app.put(
    '/variables/:name',
    {
      schema: routeSchema(tags, {
        summary:
          'Create or replace a variable ($vars.NAME in expressions). "secret": true seals it at rest, shows it as "***" and lets only $secrets.NAME use it, in the fields of http, email and sql steps that send it. Sending "***" back for a secret keeps its value.',
        params: NameParams,
        body: VariablePutSchema,
        response: { 200: VariableSchema, 201: VariableSchema, ...errors(400, 401) },
      }),
    },
    async (req, reply) => {
      const { variable, created } = await variables.put(req.params.name, req.body, auditOf(req));
      return reply.code(created ? 201 : 200).send(variable);
    },
  );

  app.delete(
    '/variables/:name',
    {
      schema: routeSchema(tags, {
        params: NameParams,
        response: { 204: Type.Null(), ...errors(400, 401, 404) },
      }),
    },
    async (req, reply) => {
      await variables.delete(req.params.name, auditOf(req));
      return reply.code(204).send(null);
    },
  );
}
