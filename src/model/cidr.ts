/**
 * IP addresses and CIDR ranges, the one parser and matcher for every list of them: a trigger's
 * `options.ipAllowlist` (SPEC 5b), HOOKFLOW_TRUST_PROXY (config.ts, http/client-ip.ts). Matching
 * is node's BlockList; this module only reads the text and treats IPv4 clients on a dual-stack
 * socket (`::ffff:a.b.c.d`) as the IPv4 addresses they are.
 *
 * A leaf (node:net only): config.ts validates with it at start-up, below every other layer.
 */
import { BlockList, isIP } from 'node:net';

export interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** One entry (`10.0.0.0/8`, `::1`, `192.0.2.7`): its parsed form, or a sentence saying what is wrong. */
export function parseCidr(entry: string): Cidr | { error: string } {
  const [address = '', prefixText, ...rest] = entry.trim().split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return { error: `"${entry}" is not an IP address or CIDR range` };
  const max = version === 4 ? 32 : 128;
  // Number('') is 0: an entry ending in "/" has no prefix, and is refused like any other.
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : -1;
  if (prefix < 0 || prefix > max) return { error: `"${entry}" has a prefix length outside 0–${max}` };
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** The first entry that does not parse, with why; undefined when all do. */
export function invalidCidr(entries: readonly string[]): string | undefined {
  for (const entry of entries) {
    const parsed = parseCidr(entry);
    if ('error' in parsed) return parsed.error;
  }
  return undefined;
}

/**
 * Whether an address lies in any of `entries` (entries that do not parse match nothing: lists
 * are validated when they are saved or configured). Text that is not an IP address never matches.
 */
export function cidrMatcher(entries: readonly string[]): (ip: string) => boolean {
  const list = new BlockList();
  for (const entry of entries) {
    const cidr = parseCidr(entry);
    if (!('error' in cidr)) list.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }
  return (ip) => {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    const address = mapped ? mapped[1]! : ip;
    const version = isIP(address);
    return version !== 0 && list.check(address, version === 4 ? 'ipv4' : 'ipv6');
  };
}
