/**
 * The signed-in member's role (SPEC 11b), for hiding what it cannot do: a viewer sees no Save,
 * Publish or New buttons, a Members page is there for admins and the owner. The server checks
 * every call anyway (403 forbidden); hiding keeps people from trying what they may not.
 */
import { createContext, useContext } from 'react';
import { atLeast, type Role } from '../../../src/shared/roles';

export const RoleContext = createContext<Role>('viewer');

export function useRole(): Role {
  return useContext(RoleContext);
}

/** Whether the signed-in member acts with at least `needed`. */
export function useCan(needed: Role): boolean {
  return atLeast(useContext(RoleContext), needed);
}
