/**
 * A new password typed twice (the owner's setup, an invitation), with the rule the server checks
 * (src/shared/password.ts).
 */
import { PASSWORD_MIN } from '../../../src/shared/password';
import { TextField } from './TextField';

export function NewPassword({
  password,
  confirm,
  onPassword,
  onConfirm,
}: {
  password: string;
  confirm: string;
  onPassword: (value: string) => void;
  onConfirm: (value: string) => void;
}) {
  return (
    <>
      <TextField
        label="Password"
        type="password"
        autoComplete="new-password"
        required
        minLength={PASSWORD_MIN}
        help={`At least ${PASSWORD_MIN} characters.`}
        value={password}
        onChange={(e) => onPassword(e.target.value)}
      />
      <TextField
        label="Password again"
        type="password"
        autoComplete="new-password"
        required
        value={confirm}
        onChange={(e) => onConfirm(e.target.value)}
      />
    </>
  );
}

/** What is wrong with a new password and its repetition, in a sentence; null when nothing is. */
export function newPasswordProblem(password: string, confirm: string): string | null {
  if (password.length < PASSWORD_MIN) return `The password needs at least ${PASSWORD_MIN} characters.`;
  if (password !== confirm) return 'The two passwords differ. Type the same password twice.';
  return null;
}
