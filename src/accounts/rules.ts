/** The rules an account's email and password follow (setup, invitations). */
import { AppError } from '../errors.js';

export function normalizeEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(e) || e.length > 254) {
    throw new AppError('validation_failed', 'The email address is not valid.', {
      fields: [{ field: '/email', message: 'must be an email address' }],
      hint: 'Use an address like you@example.com.',
    });
  }
  return e;
}

export function checkPassword(password: string): void {
  if (password.length < 8 || password.length > 1024) {
    throw new AppError('validation_failed', 'The password must have 8 to 1024 characters.', {
      fields: [{ field: '/password', message: 'must have 8 to 1024 characters' }],
      hint: 'Choose a longer password; a phrase of several words works well.',
    });
  }
}
