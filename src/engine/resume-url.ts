/**
 * An execution's resume URL (SPEC 7g, `$execution.resumeUrl`):
 * `{base_url}/webhook-resume/<executionId>/<token>`. The token is the HMAC-SHA256 of the execution
 * id under a key derived from HOOKFLOW_ENCRYPTION_KEY (`SecretBox.derive('resume-url')`): fixed
 * for the execution from its first step on (an earlier step can hand it out before the `wait`
 * runs), the same in every process that shares the key and after a restart, and never stored, so
 * neither the database nor a backup holds one. A call's token is checked by computing it again and
 * comparing in constant time. Rotating the encryption key makes the resume URLs handed out before
 * it unusable (their waits end by their timeout).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const RESUME_PREFIX = '/webhook-resume/';

/** What the engine needs to build resume URLs: plain data, so it crosses to the engine thread. */
export interface ResumeUrlOptions {
  /** HOOKFLOW_BASE_URL. */
  baseUrl: string;
  /** The derived key, hex. */
  key: string;
}

export function resumeToken(key: string, executionId: string): string {
  return createHmac('sha256', Buffer.from(key, 'hex')).update(executionId, 'utf8').digest('base64url');
}

export function resumeUrl(options: ResumeUrlOptions, executionId: string): string {
  return `${options.baseUrl}${RESUME_PREFIX}${encodeURIComponent(executionId)}/${resumeToken(options.key, executionId)}`;
}

/** Whether `token` is the resume token of `executionId` (constant time in the token). */
export function resumeTokenValid(key: string, executionId: string, token: string): boolean {
  const expected = Buffer.from(resumeToken(key, executionId), 'utf8');
  const given = Buffer.from(token, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
