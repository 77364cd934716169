/**
 * The webhook handler's caller address (src/http/client-ip.ts) must be what Fastify's `request.ip`
 * gives with the same `trustProxy` list (proxy-addr): X-Forwarded-For is believed only hop by hop
 * from trusted proxies, from the right.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientIp } from '../../src/http/client-ip.js';

const req = (remoteAddress: string, xff?: string) =>
  ({
    socket: { remoteAddress },
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
  }) as unknown as IncomingMessage;

describe('clientIp', () => {
  it.each<[string, string[], string, string | undefined, string]>([
    ['no trusted proxies: the peer, whatever it forwards', [], '10.0.0.1', '1.2.3.4', '10.0.0.1'],
    ['an untrusted peer is the client', ['10.0.0.1'], '10.0.0.9', '1.2.3.4', '10.0.0.9'],
    ['a trusted peer: the last hop it names', ['10.0.0.1'], '10.0.0.1', '1.2.3.4', '1.2.3.4'],
    ['a trusted peer without the header', ['10.0.0.1'], '10.0.0.1', undefined, '10.0.0.1'],
    ['only trusted hops are skipped', ['10.0.0.0/8'], '10.0.0.1', '9.9.9.9, 1.2.3.4, 10.0.0.2', '1.2.3.4'],
    ['all hops trusted: the leftmost', ['10.0.0.0/8'], '10.0.0.1', '10.0.0.3, 10.0.0.2', '10.0.0.3'],
    ['spaces and empty entries are ignored', ['10.0.0.1'], '10.0.0.1', ' , 1.2.3.4 ,', '1.2.3.4'],
    ['a hop that is no address is not trusted', ['10.0.0.0/8'], '10.0.0.1', '1.2.3.4, junk', 'junk'],
    ['an IPv4-mapped peer matches an IPv4 range', ['127.0.0.1'], '::ffff:127.0.0.1', '1.2.3.4', '1.2.3.4'],
    ['IPv6 ranges', ['fd00::/8'], 'fd00::1', '2001:db8::5', '2001:db8::5'],
  ])('%s', (_case, trust, peer, xff, expected) => {
    expect(clientIp(trust)(req(peer, xff))).toBe(expected);
  });
});
