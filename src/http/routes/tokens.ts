import Type from 'typebox';
import { decodeCursor } from '../../ids.js';
import type { App, HttpDeps } from '../deps.js';
import { errors, IdParams, PageQuery, pageOf, routeSchema } from '../schemas.js';

const TokenSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  createdAt: Type.String(),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]),
});

export function tokenRoutes(app: App, { tokens }: HttpDeps): void {
  const tags = ['tokens'];
  app.get(
    '/tokens',
    {
      schema: routeSchema(tags, {
        querystring: PageQuery,
        response: { 200: pageOf(TokenSchema), ...errors(401) },
      }),
    },
    async (req) => tokens.list(req.query.limit ?? 20, decodeCursor(req.query.cursor)),
  );

  app.post(
    '/tokens',
    {
      schema: routeSchema(tags, {
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 128 }) },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Intersect([TokenSchema, Type.Object({ token: Type.String() })]),
          ...errors(400, 401),
        },
      }),
    },
    async (req, reply) => {
      const { token, apiToken } = await tokens.create(req.body.name);
      // The only time the token is shown: it is stored hashed.
      return reply.code(201).send({ ...apiToken, token });
    },
  );

  app.delete(
    '/tokens/:id',
    { schema: routeSchema(tags, { params: IdParams, response: { 204: Type.Null(), ...errors(401, 404) } }) },
    async (req, reply) => {
      await tokens.revoke(req.params.id);
      return reply.code(204).send(null);
    },
  );
}
