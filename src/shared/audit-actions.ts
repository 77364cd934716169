/**
 * Every action the audit log records (SPEC 11b): the server writes only these, and the UI's Audit
 * page offers them as its filter.
 */
export const AUDIT_ACTIONS = [
  'workflow.create',
  'workflow.save',
  'workflow.publish',
  'workflow.activate',
  'workflow.deactivate',
  'workflow.delete',
  'workflow.restore',
  'workflow.import',
  'credential.create',
  'credential.rotate',
  'credential.delete',
  'credential.connect',
  'variable.set',
  'variable.delete',
  'token.create',
  'token.revoke',
  'member.invite',
  'member.invitation_revoke',
  'member.join',
  'member.role_change',
  'member.remove',
  'member.transfer_ownership',
  'auth.sign_in',
  'auth.sign_in_failed',
  'secrets.rotate',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];
