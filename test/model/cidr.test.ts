import { describe, expect, it } from 'vitest';
import { cidrMatcher, invalidCidr, parseCidr } from '../../src/model/cidr.js';

describe('parseCidr', () => {
  it.each([
    ['10.0.0.0/8', { address: '10.0.0.0', prefix: 8, family: 'ipv4' }],
    ['192.0.2.7', { address: '192.0.2.7', prefix: 32, family: 'ipv4' }],
    [' 2001:db8::/32 ', { address: '2001:db8::', prefix: 32, family: 'ipv6' }],
    ['::1', { address: '::1', prefix: 128, family: 'ipv6' }],
  ])('reads %j', (entry, parsed) => {
    expect(parseCidr(entry)).toEqual(parsed);
  });

  it.each([
    'proxy.local',
    '10.0.0.0/',
    '10.0.0.0/33',
    '::/129',
    '10.0.0.0/8/9',
    '10.0.0.0/+8',
    '10.0.0.0/0x8',
    '',
  ])('refuses %j with a sentence naming it', (entry) => {
    const parsed = parseCidr(entry);
    expect(parsed).toHaveProperty('error');
    expect((parsed as { error: string }).error).toContain(`"${entry}"`);
  });

  it('invalidCidr names the first bad entry, or nothing', () => {
    expect(invalidCidr(['10.0.0.1', '::1'])).toBeUndefined();
    expect(invalidCidr(['10.0.0.1', 'proxy.local', 'x'])).toBe(
      '"proxy.local" is not an IP address or CIDR range',
    );
  });
});

describe('cidrMatcher', () => {
  const match = cidrMatcher(['10.0.0.0/8', '2001:db8::/32', 'not-an-address']);

  it('matches addresses inside the ranges, IPv4 clients on dual-stack sockets included', () => {
    expect(match('10.1.2.3')).toBe(true);
    expect(match('::ffff:10.1.2.3')).toBe(true);
    expect(match('2001:db8::5')).toBe(true);
  });

  it('matches nothing else, and never text that is not an address', () => {
    expect(match('11.0.0.1')).toBe(false);
    expect(match('::ffff:11.0.0.1')).toBe(false);
    expect(match('2001:db9::1')).toBe(false);
    expect(match('not-an-address')).toBe(false);
    expect(match('')).toBe(false);
  });
});
