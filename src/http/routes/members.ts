/** Members and invitations (SPEC 11b; accounts/members.ts). Accepting an invitation is in auth.ts. */
import Type from 'typebox';
import { principalOf } from '../api-auth.js';
import type { App, HttpDeps } from '../deps.js';
import { errors, IdParams, routeSchema } from '../schemas.js';
import { auditContext } from '../audit-context.js';

export const RoleSchema = Type.Union(
  [Type.Literal('viewer'), Type.Literal('editor'), Type.Literal('admin'), Type.Literal('owner')],
  { description: 'owner (one) > admin > editor > viewer' },
);
const AssignableRoleSchema = Type.Union(
  [Type.Literal('viewer'), Type.Literal('editor'), Type.Literal('admin')],
  { description: 'admin, editor or viewer: ownership moves only by a transfer' },
);

const MemberSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: RoleSchema,
  createdAt: Type.String(),
});
const InvitationSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: RoleSchema,
  invitedBy: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  expiresAt: Type.String(),
});

export function memberRoutes(app: App, { accounts, config }: HttpDeps): void {
  const { members } = accounts;
  const auditOf = auditContext(config.http);
  const tags = ['members'];

  app.get(
    '/members',
    {
      schema: routeSchema(tags, {
        summary: 'Every member with their role, oldest first (one page: a team is small).',
        response: {
          200: Type.Object({ items: Type.Array(MemberSchema), nextCursor: Type.Null() }),
          ...errors(401, 403),
        },
      }),
    },
    async () => ({ items: await members.list(), nextCursor: null }),
  );

  app.get(
    '/members/invitations',
    {
      schema: routeSchema(tags, {
        summary: 'Pending invitations (not accepted, revoked or expired), newest first.',
        response: {
          200: Type.Object({ items: Type.Array(InvitationSchema), nextCursor: Type.Null() }),
          ...errors(401, 403),
        },
      }),
    },
    async () => ({ items: await members.invitations(), nextCursor: null }),
  );

  app.post(
    '/members/invitations',
    {
      schema: routeSchema(tags, {
        summary: `Invite someone with a role: the link (shown once) works once, for 7 days. A pending invitation of the same email is replaced.`,
        body: Type.Object(
          { email: Type.String({ minLength: 3, maxLength: 254 }), role: AssignableRoleSchema },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({ id: Type.String(), inviteUrl: Type.String(), expiresAt: Type.String() }),
          ...errors(400, 401, 403),
        },
      }),
    },
    async (req, reply) => {
      const by = principalOf(req)!;
      const { invitation, token } = await members.invite(req.body.email, req.body.role, by, auditOf(req));
      return reply.code(201).send({
        id: invitation.id,
        inviteUrl: `${config.http.baseUrl}/invite/${token}`,
        expiresAt: invitation.expiresAt,
      });
    },
  );

  app.delete(
    '/members/invitations/:id',
    {
      schema: routeSchema(tags, {
        summary: 'Revoke a pending invitation: its link stops working.',
        params: IdParams,
        response: { 204: Type.Null(), ...errors(401, 403, 404) },
      }),
    },
    async (req, reply) => {
      await members.revokeInvitation(req.params.id, auditOf(req));
      return reply.code(204).send(null);
    },
  );

  app.patch(
    '/members/:id',
    {
      schema: routeSchema(tags, {
        summary: "Change a member's role (not the owner's). Their sessions and tokens act with it at once.",
        params: IdParams,
        body: Type.Object({ role: AssignableRoleSchema }, { additionalProperties: false }),
        response: { 200: MemberSchema, ...errors(400, 401, 403, 404) },
      }),
    },
    async (req) => members.setRole(req.params.id, req.body.role, auditOf(req)),
  );

  app.delete(
    '/members/:id',
    {
      schema: routeSchema(tags, {
        summary: 'Remove a member (not the owner): their sessions and API tokens stop at once.',
        params: IdParams,
        response: { 204: Type.Null(), ...errors(401, 403, 404) },
      }),
    },
    async (req, reply) => {
      await members.remove(req.params.id, auditOf(req));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/members/:id/transfer-ownership',
    {
      schema: routeSchema(tags, {
        summary: 'Make this member the owner (owner only); the previous owner becomes an admin.',
        params: IdParams,
        response: { 200: MemberSchema, ...errors(401, 403, 404) },
      }),
    },
    async (req) => members.transferOwnership(req.params.id, auditOf(req)),
  );
}
