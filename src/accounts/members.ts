/**
 * Members and invitations (SPEC 11b). The owner (one) and admins invite people by link: the link
 * carries 32 random bytes, only their sha256 is stored, it works once and for 7 days. Roles change
 * at once everywhere: sessions and API tokens read the member's current role at every call, and
 * removing a member deletes their sessions and tokens in the same transaction as the account.
 * Ownership moves only by a transfer the owner makes; the old owner becomes an admin.
 */
import { createHash, randomBytes } from 'node:crypto';
import { type Audit, record } from '../audit/audit.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { AssignableRole, Role } from '../shared/roles.js';
import { invitationsRepo } from '../store/invitations.js';
import type { Store } from '../store/store.js';
import { type MemberRow, usersRepo } from '../store/users.js';
import { normalizeEmail } from './rules.js';

export const INVITATION_DAYS = 7;
/** The lock every change of the accounts takes (the setup uses it too). */
export const ACCOUNTS_LOCK = 'hookflow:accounts';

export interface Member {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  invitedBy: string | null;
  createdAt: string;
  expiresAt: string;
}

/** Who asks for a change: a member (null for the owner's CLI tokens) and the role they act with. */
export interface Actor {
  memberId: string | null;
  role: Role;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

const toMember = (row: MemberRow): Member => ({
  id: row.id,
  email: row.email,
  role: row.role,
  createdAt: row.created_at,
});

const memberNotFound = (id: string) =>
  new AppError('not_found', `There is no member with id ${id}.`, {
    hint: 'List members with GET /api/v1/members to see their ids.',
  });

const ownerIsFixed = (what: string) =>
  new AppError('forbidden', `The owner cannot be ${what}.`, {
    hint: 'Only the owner can hand ownership on (POST /api/v1/members/:id/transfer-ownership); they then become an admin.',
  });

export class Members {
  readonly #store: Store;
  readonly #now: () => number;

  constructor({ store, now = Date.now }: { store: Store; now?: () => number }) {
    this.#store = store;
    this.#now = now;
  }

  async list(): Promise<Member[]> {
    return (await usersRepo.list(this.#store.db)).map(toMember);
  }

  async invitations(): Promise<Invitation[]> {
    const rows = await invitationsRepo.listPending(this.#store.db, new Date(this.#now()).toISOString());
    return rows.map((r) => ({
      id: r.id,
      email: r.email,
      role: r.role,
      invitedBy: r.invited_by,
      createdAt: r.created_at,
      expiresAt: r.expires_at,
    }));
  }

  /**
   * A new invitation and the token of its link (shown once). A pending invitation of the same
   * email is replaced: its link stops working.
   */
  async invite(
    email: string,
    role: AssignableRole,
    by: Actor,
    audit?: Audit,
  ): Promise<{ invitation: Invitation; token: string }> {
    const normalized = normalizeEmail(email);
    const token = randomBytes(32).toString('base64url');
    const now = new Date(this.#now());
    const invitation: Invitation = {
      id: newId(),
      email: normalized,
      role,
      invitedBy: by.memberId,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + INVITATION_DAYS * 86_400_000).toISOString(),
    };
    await this.#store.transaction(
      async (trx) => {
        if (await usersRepo.findByEmail(trx, normalized)) throw alreadyMember(normalized);
        await invitationsRepo.deleteExpired(trx, invitation.createdAt);
        await invitationsRepo.deleteByEmail(trx, normalized);
        await invitationsRepo.insert(trx, {
          id: invitation.id,
          token_hash: sha256(token),
          email: invitation.email,
          role: invitation.role,
          invited_by: invitation.invitedBy,
          created_at: invitation.createdAt,
          expires_at: invitation.expiresAt,
        });
        await record(trx, audit, {
          action: 'member.invite',
          target: { type: 'invitation', id: invitation.id, name: invitation.email },
          details: { role },
        });
      },
      { lock: ACCOUNTS_LOCK },
    );
    return { invitation, token };
  }

  async revokeInvitation(id: string, audit?: Audit): Promise<void> {
    await this.#store.transaction(async (trx) => {
      if (!(await invitationsRepo.delete(trx, id))) {
        throw new AppError('not_found', `There is no pending invitation with id ${id}.`, {
          hint: 'List them with GET /api/v1/members/invitations.',
        });
      }
      await record(trx, audit, { action: 'member.invitation_revoke', target: { type: 'invitation', id } });
    });
  }

  /** A new role for a member other than the owner. */
  async setRole(id: string, role: AssignableRole, audit?: Audit): Promise<Member> {
    return this.#store.transaction(
      async (trx) => {
        const row = await usersRepo.get(trx, id);
        if (!row) throw memberNotFound(id);
        if (row.role === 'owner') throw ownerIsFixed('given another role');
        await usersRepo.setRole(trx, id, role);
        await record(trx, audit, {
          action: 'member.role_change',
          target: { type: 'member', id, name: row.email },
          details: { from: row.role, to: role },
        });
        return toMember({ ...row, role });
      },
      { lock: ACCOUNTS_LOCK },
    );
  }

  /** Removes a member other than the owner; their sessions and API tokens stop with the account. */
  async remove(id: string, audit?: Audit): Promise<void> {
    await this.#store.transaction(
      async (trx) => {
        const row = await usersRepo.get(trx, id);
        if (!row) throw memberNotFound(id);
        if (row.role === 'owner') throw ownerIsFixed('removed');
        await usersRepo.delete(trx, id);
        await record(trx, audit, {
          action: 'member.remove',
          target: { type: 'member', id, name: row.email },
          details: { role: row.role },
        });
      },
      { lock: ACCOUNTS_LOCK },
    );
  }

  /** Makes `id` the owner; whoever was the owner becomes an admin. */
  async transferOwnership(id: string, audit?: Audit): Promise<Member> {
    return this.#store.transaction(
      async (trx) => {
        const row = await usersRepo.get(trx, id);
        if (!row) throw memberNotFound(id);
        if (row.role !== 'owner') {
          await usersRepo.demoteOwner(trx);
          await usersRepo.setRole(trx, id, 'owner');
          await record(trx, audit, {
            action: 'member.transfer_ownership',
            target: { type: 'member', id, name: row.email },
            details: { from: row.role },
          });
        }
        return toMember({ ...row, role: 'owner' });
      },
      { lock: ACCOUNTS_LOCK },
    );
  }
}

export const alreadyMember = (email: string) =>
  new AppError('validation_failed', `${email} is already a member.`, {
    fields: [{ field: '/email', message: 'is already a member' }],
    hint: 'Change their role in the member list instead.',
  });
