/**
 * The caller's address, for webhooks (served outside Fastify) and the API's sign-in throttle alike
 * (Fastify's own trustProxy is off): the proxy-addr algorithm Fastify would use — walk from
 * the socket's peer through X-Forwarded-For from right to left while the address is a trusted
 * proxy; the first untrusted one is the client. With no trusted proxies X-Forwarded-For is never
 * read (FIELD-NOTES 12). Entries that are not IP addresses are never trusted.
 */
import type { IncomingMessage } from 'node:http';
import { cidrMatcher } from '../model/cidr.js';

export type ClientIp = (req: IncomingMessage) => string;

export function clientIp(trustProxy: readonly string[]): ClientIp {
  if (trustProxy.length === 0) return (req) => req.socket.remoteAddress ?? '';
  const isTrusted = cidrMatcher(trustProxy);
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
