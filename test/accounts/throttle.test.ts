import { describe, expect, it } from 'vitest';
import { addressKey, FailureThrottle } from '../../src/accounts/throttle.js';

function throttle(overrides: Partial<ConstructorParameters<typeof FailureThrottle>[0]> = {}) {
  const clock = { t: 1_000_000 };
  const t = new FailureThrottle({
    freeFailures: 3,
    baseBlockMs: 1_000,
    maxBlockMs: 8_000,
    forgetAfterMs: 60_000,
    maxKeys: 100,
    now: () => clock.t,
    ...overrides,
  });
  return { t, clock };
}

describe('FailureThrottle', () => {
  it('blocks after the free failures, doubling each time up to the cap', () => {
    const { t, clock } = throttle();
    expect([t.fail('a'), t.fail('a')]).toEqual([0, 0]);
    const blocks: number[] = [];
    for (let i = 0; i < 6; i++) {
      blocks.push(t.fail('a'));
      clock.t += blocks.at(-1)!;
    }
    expect(blocks).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    expect(t.blockedFor('b')).toBe(0);
  });

  it('reports the time left, and forgets a key a while after its last failure', () => {
    const { t, clock } = throttle();
    for (let i = 0; i < 3; i++) t.fail('a');
    clock.t += 400;
    expect(t.blockedFor('a')).toBe(600);
    clock.t += 60_001;
    expect(t.blockedFor('a')).toBe(0);
    expect(t.fail('a')).toBe(0);
  });

  it('restart counts the block again from now (a failure confirmed after a slow check)', () => {
    const { t, clock } = throttle();
    for (let i = 0; i < 3; i++) t.fail('a');
    clock.t += 900;
    t.restart('a');
    expect(t.blockedFor('a')).toBe(1_000);
    t.restart('never-failed');
    expect(t.size).toBe(1);
  });

  it('takeBack undoes a counted attempt and lifts a block it caused', () => {
    const { t } = throttle();
    for (let i = 0; i < 3; i++) t.fail('a');
    expect(t.blockedFor('a')).toBe(1_000);
    t.takeBack('a');
    expect(t.blockedFor('a')).toBe(0);
    t.forget('a');
    expect(t.size).toBe(0);
  });

  it('stays bounded without forgetting a blocked key when flooded with one-off failures', () => {
    const { t } = throttle({ maxKeys: 50 });
    for (let i = 0; i < 3; i++) t.fail('victim');
    for (let i = 0; i < 10_000; i++) t.fail(`flood-${i}`);
    expect(t.size).toBe(50);
    expect(t.blockedFor('victim')).toBe(1_000);
    // The newest keys are kept too: eviction takes the oldest unblocked keys, not everything.
    expect(t.fail('flood-9999')).toBe(0);
    expect(t.fail('flood-9999')).toBe(1_000);
  });
});

describe('addressKey', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::7', '2001:db8:1:2::/64'],
    ['2001:DB8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  ])('%s → %s', (ip, key) => {
    expect(addressKey(ip)).toBe(key);
  });
});
