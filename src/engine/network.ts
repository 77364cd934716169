/**
 * Where `http` steps may connect. By default only public addresses: a workflow must not become a
 * way into the host's own services, the cloud metadata endpoint (169.254.169.254) or the private
 * network (SSRF). HOOKFLOW_ALLOW_PRIVATE_NETWORK=true lifts that (a trusted single-user install).
 *
 * The check runs on the address actually connected to: inside the DNS lookup of the connection
 * (so a name that resolves to a private address, or re-resolves to one later — DNS rebinding —
 * is refused) and on IP literals, which connect without a lookup. Every redirect hop goes
 * through the same connection path, so it is checked again.
 */
import dns from 'node:dns';
import net from 'node:net';
import type { Agent } from 'undici';

export interface NetworkPolicy {
  /** Why `address` (an IP) may not be reached, or undefined when it may. */
  refuse(address: string): string | undefined;
}

export const OPEN_NETWORK: NetworkPolicy = { refuse: () => undefined };

// IANA special-purpose registries; everything here is unreachable from, or private to, the host.
const V4_BLOCKED: [string, number, string][] = [
  ['0.0.0.0', 8, 'a "this network" address'],
  ['10.0.0.0', 8, 'a private address'],
  ['100.64.0.0', 10, 'a shared (carrier-grade NAT) address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.0.0', 16, 'a link-local address'],
  ['172.16.0.0', 12, 'a private address'],
  ['192.0.0.0', 24, 'an IETF protocol address'],
  ['192.168.0.0', 16, 'a private address'],
  ['198.18.0.0', 15, 'a benchmarking address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'],
];
const V6_BLOCKED: [string, number, string][] = [
  ['::', 128, 'the unspecified address'],
  ['::1', 128, 'a loopback address'],
  ['fc00::', 7, 'a unique-local (private) address'],
  ['fe80::', 10, 'a link-local address'],
  ['fec0::', 10, 'a site-local address'],
  ['ff00::', 8, 'a multicast address'],
];

/** Refuses loopback, link-local, private and other non-public addresses (IPv4 and IPv6). */
export function publicNetworkOnly(): NetworkPolicy {
  const lists = [
    ...V4_BLOCKED.map((r) => ({ r, type: 'ipv4' as const })),
    ...V6_BLOCKED.map((r) => ({ r, type: 'ipv6' as const })),
  ].map(({ r: [addr, prefix, why], type }) => {
    const list = new net.BlockList();
    list.addSubnet(addr, prefix, type);
    return { list, type, why };
  });
  const refuse = (address: string): string | undefined => {
    const family = net.isIP(address);
    if (family === 0) return 'not an IP address';
    if (family === 6) {
      const v4 = embeddedIpv4(address);
      if (v4 !== undefined) return refuse(v4);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    for (const entry of lists) if (entry.type === type && entry.list.check(address, type)) return entry.why;
    return undefined;
  };
  return { refuse };
}

/**
 * The IPv4 address inside an IPv6 one that reaches it: IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
export function embeddedIpv4(address: string): string | undefined {
  const groups = expandIpv6(address);
  if (!groups) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zeros(0, 5) && (groups[5] === 0xffff || (groups[5] === 0 && (groups[6] !== 0 || groups[7]! > 1)))) {
    return v4(groups[6]!, groups[7]!);
  }
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return v4(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!);
  return undefined;
}

function expandIpv6(address: string): number[] | undefined {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
  const h = parse(head);
  const t = tail === undefined ? [] : parse(tail);
  const groups = tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : undefined;
}

/** The error a refused connection fails with; its message is what the step records. */
export class NetworkRefused extends Error {
  constructor(host: string, address: string, why: string) {
    super(
      `Refused to connect to ${host === address ? address : `${host} (${address})`}: it is ${why}. ` +
        'Outbound requests reach public addresses only unless HOOKFLOW_ALLOW_PRIVATE_NETWORK=true.',
    );
    this.name = 'NetworkRefused';
  }
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/** A `lookup` for net.connect that resolves as usual, then refuses the whole name if any address is refused. */
export function guardedLookup(policy: NetworkPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, options.all ? [] : '', 0);
      for (const a of addresses) {
        const why = policy.refuse(a.address);
        if (why)
          return callback(
            new NetworkRefused(hostname, a.address, why) as NodeJS.ErrnoException,
            options.all ? [] : '',
            0,
          );
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

type Undici = typeof import('undici');
let undici: Promise<Undici> | undefined;

/**
 * undici, loaded when the first `http` step runs: ~4.6 MB of heap (and its code) in every thread
 * that has an engine — the event loop's (pure runs, which have no `http` step) and the engine
 * thread's — for workflows that may never call out.
 */
export function loadUndici(): Promise<Undici> {
  undici ??= import('undici').catch((err: unknown) => {
    undici = undefined;
    throw err;
  });
  return undici;
}

/** HOOKFLOW_HTTP_MAX_SOCKETS_PER_HOST's default (SPEC 7d). */
export const DEFAULT_MAX_SOCKETS_PER_HOST = 128;

/**
 * The outbound side of `http` steps: the policy, and a connection pool that enforces it. The pool
 * opens at most `maxSocketsPerHost` connections to one origin (scheme, host and port; undici's
 * per-origin `connections`); requests beyond them wait for a free one, within their step's
 * `timeoutMs`. Without a cap, every execution in flight against one slow API would hold a socket
 * to it (and a file descriptor here), however many that API can serve.
 */
export class Outbound {
  readonly policy: NetworkPolicy;
  readonly maxSocketsPerHost: number;
  #dispatcher: Promise<Agent> | undefined;

  constructor(policy: NetworkPolicy, maxSocketsPerHost = DEFAULT_MAX_SOCKETS_PER_HOST) {
    this.policy = policy;
    this.maxSocketsPerHost = maxSocketsPerHost;
  }

  /** The connection pool, made on first use (see `loadUndici`). */
  dispatcher(): Promise<Agent> {
    this.#dispatcher ??= loadUndici().then(({ Agent }) =>
      this.policy === OPEN_NETWORK
        ? new Agent({ connections: this.maxSocketsPerHost })
        : new Agent({
            connections: this.maxSocketsPerHost,
            connect: { lookup: guardedLookup(this.policy) as never },
          }),
    );
    return this.#dispatcher;
  }

  /** Why a URL's host may not be reached, when it is an IP literal (names are checked on lookup). */
  refuseLiteral(hostname: string): string | undefined {
    const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
    return net.isIP(host) === 0 ? undefined : this.policy.refuse(host);
  }

  /** Cut whatever is still in flight (called after the worker's drain deadline). */
  async close(): Promise<void> {
    if (this.#dispatcher) await (await this.#dispatcher).destroy();
  }
}

export function createOutbound({
  allowPrivateNetwork,
  maxSocketsPerHost,
}: {
  allowPrivateNetwork: boolean;
  maxSocketsPerHost?: number | undefined;
}): Outbound {
  return new Outbound(allowPrivateNetwork ? OPEN_NETWORK : publicNetworkOnly(), maxSocketsPerHost);
}
