/** The audit log (SPEC 11b; src/audit/audit.ts): owner and admins. */
import Type from 'typebox';
import type { AuditLog } from '../../audit/audit.js';
import { decodeCursor } from '../../ids.js';
import type { App } from '../deps.js';
import { errors, pageOf, routeSchema } from '../schemas.js';

const Ref = (what: string) =>
  Type.Object(
    {
      type: Type.String(),
      id: Type.Union([Type.String(), Type.Null()]),
      name: Type.Union([Type.String(), Type.Null()]),
    },
    {
      description: what,
    },
  );

const AuditEntrySchema = Type.Object({
  id: Type.String(),
  at: Type.String(),
  actor: Type.Object({
    type: Type.Union([Type.Literal('user'), Type.Literal('token'), Type.Literal('system')]),
    id: Type.Union([Type.String(), Type.Null()]),
    name: Type.String(),
  }),
  action: Type.String({
    description: 'e.g. workflow.publish, credential.rotate, member.role_change, auth.sign_in_failed',
  }),
  target: Ref('What was changed: a workflow, credential, token, member or invitation.'),
  details: Type.Record(Type.String(), Type.Unknown(), { description: 'Never a secret.' }),
  ip: Type.Union([Type.String(), Type.Null()]),
});

export function auditRoutes(app: App, log: AuditLog): void {
  app.get(
    '/audit',
    {
      schema: routeSchema(['audit'], {
        summary: 'Every change, newest first: who (user, token or system), what, from which address.',
        querystring: Type.Object({
          actor: Type.Optional(
            Type.String({ maxLength: 254, description: "An actor's id, email or token name" }),
          ),
          action: Type.Optional(Type.String({ maxLength: 64 })),
          workflowId: Type.Optional(Type.String({ maxLength: 64 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          cursor: Type.Optional(Type.String({ maxLength: 200 })),
        }),
        response: { 200: pageOf(AuditEntrySchema), ...errors(400, 401, 403) },
      }),
    },
    async (req) =>
      log.list({
        actor: req.query.actor,
        action: req.query.action,
        workflowId: req.query.workflowId,
        before: decodeCursor(req.query.cursor),
        limit: req.query.limit ?? 50,
      }),
  );
}
