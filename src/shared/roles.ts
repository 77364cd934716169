/**
 * Team roles (SPEC 11b), lowest first: each role may do everything the ones before it may.
 * `viewer` reads workflows and executions; `editor` also changes them (credentials, tests, its own
 * API tokens); `admin` also manages members; `owner` (one) also hands ownership on. Shared with the
 * UI, which hides what the signed-in role cannot do.
 */
export const ROLES = ['viewer', 'editor', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/** Roles an invitation or a role change may give: ownership only moves by a transfer. */
export const ASSIGNABLE_ROLES = ['viewer', 'editor', 'admin'] as const satisfies readonly Role[];
export type AssignableRole = (typeof ASSIGNABLE_ROLES)[number];

export const isRole = (value: unknown): value is Role => (ROLES as readonly unknown[]).includes(value);

/** Whether `role` may do what `needed` may. */
export const atLeast = (role: Role, needed: Role): boolean => ROLES.indexOf(role) >= ROLES.indexOf(needed);

/** The lower of two roles (an API token acts with its own role, capped by its member's). */
export const lowerOf = (a: Role, b: Role): Role => (ROLES.indexOf(a) <= ROLES.indexOf(b) ? a : b);
