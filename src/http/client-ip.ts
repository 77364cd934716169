/**
 * The caller's address for requests served outside Fastify (the webhook handler), computed exactly
 * as Fastify's `request.ip` does with `trustProxy: [...]` (the proxy-addr algorithm): walk from
 * the socket's peer through X-Forwarded-For from right to left while the address is a trusted
 * proxy; the first untrusted one is the client. With no trusted proxies X-Forwarded-For is never
 * read (FIELD-NOTES 12). Entries that are not IP addresses are never trusted.
 */
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

export type ClientIp = (req: IncomingMessage) => string;

export function clientIp(trustProxy: readonly string[]): ClientIp {
  if (trustProxy.length === 0) return (req) => req.socket.remoteAddress ?? '';
  const trusted = new BlockList();
  for (const entry of trustProxy) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    trusted.addSubnet(
      address,
      prefix === undefined ? (family === 'ipv6' ? 128 : 32) : Number(prefix),
      family,
    );
  }
  const isTrusted = (address: string): boolean => {
    const version = isIP(address);
    if (version === 0) return false;
    // BlockList matches an IPv4-mapped IPv6 address (::ffff:a.b.c.d) against IPv4 subnets itself.
    return trusted.check(address, version === 6 ? 'ipv6' : 'ipv4');
  };
  return (req) => {
    let address = req.socket.remoteAddress ?? '';
    const header = req.headers['x-forwarded-for'];
    if (!header || !isTrusted(address)) return address;
    const hops = (Array.isArray(header) ? header.join(',') : header).split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!.trim();
      if (hop === '') continue;
      address = hop;
      if (!isTrusted(hop)) return hop;
    }
    return address;
  };
}
