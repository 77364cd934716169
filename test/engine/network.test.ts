import { describe, expect, it } from 'vitest';
import { embeddedIpv4, publicNetworkOnly } from '../../src/engine/network.js';

describe('publicNetworkOnly', () => {
  const policy = publicNetworkOnly();

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade'],
    ['0.0.0.0', 'this network'],
    ['224.0.0.1', 'multicast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fd00::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:c0a8:0101::1', 'private'],
  ])('refuses %s', (address, why) => {
    expect(policy.refuse(address)).toContain(why);
  });

  it.each(['8.8.8.8', '172.15.0.1', '172.32.0.1', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'allows %s',
    (address) => {
      expect(policy.refuse(address)).toBeUndefined();
    },
  );

  it.each([
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['::ffff:a00:1', '10.0.0.1'],
    ['64:ff9b::808:808', '8.8.8.8'],
    ['2002:0808:0808::', '8.8.8.8'],
    ['2001:db8::1', undefined],
    ['::1', undefined],
  ])('finds the IPv4 address inside %s', (v6, v4) => {
    expect(embeddedIpv4(v6)).toBe(v4);
  });
});
