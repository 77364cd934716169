/**
 * `options.ipAllowlist` (SPEC 5b): CIDR ranges, IPv4 and IPv6 (model/cidr.ts). The caller's
 * address is http/client-ip.ts's, which honours X-Forwarded-For only from the proxies named in
 * HOOKFLOW_TRUST_PROXY (FIELD-NOTES 12).
 */
import { cidrMatcher } from '../../model/cidr.js';

// Compiled once per trigger options object (a new object on every save), not per request.
const compiled = new WeakMap<readonly string[], (ip: string) => boolean>();

export function ipAllowed(allowlist: readonly string[], ip: string): boolean {
  let allowed = compiled.get(allowlist);
  if (!allowed) {
    allowed = cidrMatcher(allowlist);
    compiled.set(allowlist, allowed);
  }
  return allowed(ip);
}
