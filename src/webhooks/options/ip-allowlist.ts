/**
 * `options.ipAllowlist` (SPEC 5b): CIDR ranges, IPv4 and IPv6, matched with node's BlockList.
 * The caller's address is Fastify's `req.ip`, which honours X-Forwarded-For only from the
 * proxies named in HOOKFLOW_TRUST_PROXY (FIELD-NOTES 12).
 */
import { BlockList, isIP } from 'node:net';

/** The parsed form of one entry, or an error sentence (used by workflow validation). */
export function parseCidr(
  entry: string,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | { error: string } {
  const [address = '', prefixText] = entry.trim().split('/');
  const version = isIP(address);
  if (version === 0) return { error: `"${entry}" is not an IP address or CIDR range` };
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) {
    return { error: `"${entry}" has a prefix length outside 0–${max}` };
  }
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

// Compiled once per trigger options object (a new object on every save), not per request.
const compiled = new WeakMap<readonly string[], BlockList>();

export function ipAllowed(allowlist: readonly string[], ip: string): boolean {
  let list = compiled.get(allowlist);
  if (!list) {
    list = new BlockList();
    for (const entry of allowlist) {
      const cidr = parseCidr(entry);
      if ('error' in cidr) continue; // refused when the workflow was saved
      list.addSubnet(cidr.address, cidr.prefix, cidr.family);
    }
    compiled.set(allowlist, list);
  }
  // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const address = mapped ? mapped[1]! : ip;
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  return list.check(address, family);
}
