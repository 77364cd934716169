import { describe, expect, it } from 'vitest';
import { bodySize, eventName, formatBytes, testEventLabel } from '../../web/src/lib/testEvents.js';
import type { TriggerItem } from '../../web/src/types.js';

describe('eventName', () => {
  it.each<[string, TriggerItem, string | undefined]>([
    ['a GitHub push', { headers: { 'x-github-event': 'push' }, body: { ref: 'main' } }, 'push'],
    [
      'a GitHub pull request, with its action',
      { headers: { 'X-GitHub-Event': 'pull_request' }, body: { action: 'opened' } },
      'pull_request opened',
    ],
    ['a generic event header', { headers: { 'x-event-type': 'order.created' }, body: {} }, 'order.created'],
    [
      'a Stripe-style type in the body',
      { body: { type: 'payment_intent.succeeded', data: {} } },
      'payment_intent.succeeded',
    ],
    ['a top-level action alone', { body: { action: 'deleted' } }, 'deleted'],
    [
      'the header before the body type',
      { headers: { 'x-github-event': 'issues' }, body: { type: 'x' } },
      'issues',
    ],
    ['nothing that names it', { method: 'POST', body: { a: 1 } }, undefined],
    ['a type that is not text', { body: { type: 3 } }, undefined],
  ])('%s', (_what, item, expected) => {
    expect(eventName(item)).toBe(expected);
  });
});

describe('bodySize and formatBytes', () => {
  it('takes Content-Length when the request had one, else the JSON length in bytes', () => {
    expect(bodySize({ headers: { 'content-length': '2048' }, body: { a: 1 } })).toBe(2048);
    expect(bodySize({ body: { a: 'é' } })).toBe(10);
    expect(bodySize({ body: '' })).toBe(0);
    expect(bodySize({})).toBe(0);
  });

  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1536, '1.5 KB'],
    [12 * 1024 + 300, '12 KB'],
    [3 * 1024 * 1024, '3.0 MB'],
  ])('%i bytes read %s', (n, text) => {
    expect(formatBytes(n)).toBe(text);
  });
});

describe('testEventLabel', () => {
  it('tells a push from a pull request from the same sender at the same second', () => {
    const push = testEventLabel(
      { method: 'POST', headers: { 'x-github-event': 'push', 'content-length': '7500' } },
      '12:43:24',
    );
    const pull = testEventLabel(
      { method: 'POST', headers: { 'x-github-event': 'pull_request' }, body: { action: 'opened' } },
      '12:43:24',
    );
    expect(push).toBe('push · 7.3 KB · 12:43:24');
    expect(pull).toBe('pull_request opened · 19 B · 12:43:24');
  });

  it('falls back to the method when nothing names the event', () => {
    expect(testEventLabel({ method: 'POST', body: { a: 1 } }, '09:00:00')).toBe('POST · 7 B · 09:00:00');
  });
});
