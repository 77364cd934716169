/** Members and invitations (SPEC 11b; accounts/members.ts). Accepting an invitation is in auth.ts. */
import Type from 'typebox';
import { principalOf } from '../api-auth.js';
import type { App, HttpDeps } from '../deps.js';
import { errors, IdParams, routeSchema } from '../schemas.js';
import { auditContext } from '../audit-context.js';
import { invitationMail } from '../../accounts/invite-mail.js';

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

export function memberRoutes(app: App, { accounts, config, mailer, log }: HttpDeps): void {
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
        summary: `Invite someone with a role: the link (shown once) works once, for 7 days. A pending invitation of the same email is replaced. With HOOKFLOW_MAILER_CREDENTIAL set, the link is also mailed, and \`mail\` says whether it was sent (the invitation stands either way).`,
        body: Type.Object(
          { email: Type.String({ minLength: 3, maxLength: 254 }), role: AssignableRoleSchema },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({
            id: Type.String(),
            inviteUrl: Type.String(),
            expiresAt: Type.String(),
            mail: Type.Optional(
              Type.Object(
                {
                  sent: Type.Boolean(),
                  to: Type.String(),
                  error: Type.Optional(Type.String({ description: 'Why the mail was not sent.' })),
                },
                {
                  description:
                    'Only with HOOKFLOW_MAILER_CREDENTIAL set: whether the link was mailed. When it was not, the invitation still stands: pass on inviteUrl yourself.',
                },
              ),
            ),
          }),
          ...errors(400, 401, 403),
        },
      }),
    },
    async (req, reply) => {
      const by = principalOf(req)!;
      const { invitation, token } = await members.invite(req.body.email, req.body.role, by, auditOf(req));
      const inviteUrl = `${config.http.baseUrl}/invite/${token}`;
      const answer = { id: invitation.id, inviteUrl, expiresAt: invitation.expiresAt };
      if (!mailer) return reply.code(201).send(answer);
      // After the invitation's commit: a mail that cannot be sent loses nothing, it is said so.
      const sent = await mailer.send(
        invitationMail({
          email: invitation.email,
          role: invitation.role,
          inviteUrl,
          expiresAt: invitation.expiresAt,
          invitedBy: by.name,
          baseUrl: config.http.baseUrl,
        }),
      );
      if (sent.sent)
        log.info({ invitationId: invitation.id, messageId: sent.messageId }, 'invitation mailed');
      else
        log.warn(
          { invitationId: invitation.id, credential: mailer.credential, reason: sent.error },
          'invitation mail not sent',
        );
      return reply.code(201).send({
        ...answer,
        mail: sent.sent
          ? { sent: true, to: invitation.email }
          : { sent: false, to: invitation.email, error: sent.error },
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
