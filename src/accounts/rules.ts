/** The rules an account's email and password follow (setup, invitations). */
import { AppError } from '../errors.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../shared/password.js';

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
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
    const range = `${PASSWORD_MIN} to ${PASSWORD_MAX} characters`;
    throw new AppError('validation_failed', `The password must have ${range}.`, {
      fields: [{ field: '/password', message: `must have ${range}` }],
      hint: 'Choose a longer password; a phrase of several words works well.',
    });
  }
}
