/**
 * How long a password may be: checked by the server (accounts/rules.ts) and told by the UI before
 * it sends one (the owner's setup, an invitation).
 */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 1024;
