/**
 * The message that carries an invitation's link (SPEC 11b), when HOOKFLOW_MAILER_CREDENTIAL names
 * an smtp credential: who invited, with which role, the link and until when it works. Plain text
 * and the same in HTML (values escaped).
 */
import type { SystemMail } from '../credentials/mailer.js';

export function invitationMail(invite: {
  email: string;
  role: string;
  inviteUrl: string;
  expiresAt: string;
  invitedBy: string;
  baseUrl: string;
}): SystemMail {
  const until = `${invite.expiresAt.slice(0, 16).replace('T', ' ')} UTC`;
  const text = [
    `${invite.invitedBy} invited you to hookflow at ${invite.baseUrl} as ${article(invite.role)} ${invite.role}.`,
    '',
    'Open this link to set your password and sign in:',
    invite.inviteUrl,
    '',
    `The link works once, until ${until}. If you did not expect this invitation, ignore this message.`,
  ].join('\n');
  const html = [
    `<p>${escapeHtml(invite.invitedBy)} invited you to hookflow at ${escapeHtml(invite.baseUrl)} as ${article(invite.role)} <b>${escapeHtml(invite.role)}</b>.</p>`,
    `<p><a href="${escapeHtml(invite.inviteUrl)}">Set your password and sign in</a></p>`,
    `<p>Or open this link: ${escapeHtml(invite.inviteUrl)}</p>`,
    `<p>The link works once, until ${escapeHtml(until)}. If you did not expect this invitation, ignore this message.</p>`,
  ].join('\n');
  return { to: invite.email, subject: 'You are invited to hookflow', text, html };
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
