import Type from 'typebox';
import { decodeCursor } from '../../ids.js';
import type { App, HttpDeps } from '../deps.js';
import { atLeast } from '../../shared/roles.js';
import { tokenNotFound } from '../../tokens/tokens.js';
import { principalOf } from '../api-auth.js';
import { forbidden } from '../permissions.js';
import { errors, IdParams, PageQuery, pageOf, routeSchema } from '../schemas.js';
import { RoleSchema } from './members.js';
import { auditContext } from '../audit-context.js';

const TokenSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  role: RoleSchema,
  memberId: Type.Union([Type.String(), Type.Null()], {
    description: "The member it belongs to; null: the owner's (made by `hookflow tokens create`).",
  }),
  createdAt: Type.String(),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]),
});

export function tokenRoutes(app: App, { tokens, config }: HttpDeps): void {
  const auditOf = auditContext(config.http);
  const tags = ['tokens'];
  app.get(
    '/tokens',
    {
      schema: routeSchema(tags, {
        querystring: PageQuery,
        response: { 200: pageOf(TokenSchema), ...errors(401) },
      }),
    },
    async (req) => {
      // Admins and the owner see every token; others their own.
      const me = principalOf(req)!;
      const mine = atLeast(me.role, 'admin') ? undefined : me.memberId;
      return tokens.list(req.query.limit ?? 20, decodeCursor(req.query.cursor), mine);
    },
  );

  app.post(
    '/tokens',
    {
      schema: routeSchema(tags, {
        summary:
          'A token of yours, acting with your role or the lower one given (never above your role, now or later). Shown once.',
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 128 }), role: Type.Optional(RoleSchema) },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Intersect([TokenSchema, Type.Object({ token: Type.String() })]),
          ...errors(400, 401, 403),
        },
      }),
    },
    async (req, reply) => {
      const me = principalOf(req)!;
      const role = req.body.role ?? me.role;
      if (!atLeast(me.role, role)) throw forbidden(me.role, role, `A token with the ${role} role`);
      const { token, apiToken } = await tokens.create(
        req.body.name,
        { memberId: me.memberId, role },
        auditOf(req),
      );
      // The only time the token is shown: it is stored hashed.
      return reply.code(201).send({ ...apiToken, token });
    },
  );

  app.delete(
    '/tokens/:id',
    {
      schema: routeSchema(tags, {
        summary: "Revoke a token: your own, or anyone's as an admin or the owner.",
        params: IdParams,
        response: { 204: Type.Null(), ...errors(401, 403, 404) },
      }),
    },
    async (req, reply) => {
      const me = principalOf(req)!;
      const token = await tokens.get(req.params.id);
      if (!token) throw tokenNotFound(req.params.id);
      if (token.memberId !== me.memberId && !atLeast(me.role, 'admin')) {
        throw forbidden(me.role, 'admin', "Revoking another member's token");
      }
      await tokens.revoke(req.params.id, auditOf(req));
      return reply.code(204).send(null);
    },
  );
}
