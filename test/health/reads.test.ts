import { describe, expect, it } from 'vitest';
import { fieldsRead } from '../../src/health/reads.js';

const read = (steps: unknown[]) =>
  Object.fromEntries(fieldsRead(steps).map((r) => [r.path.join('.'), r.steps]));

describe('fieldsRead', () => {
  it('reads $trigger paths in any step, and input paths in steps whose input is the trigger item', () => {
    expect(
      read([
        { type: 'set', name: 'a', fields: { id: '{{ body.order.id }}', page: 'p{{ $string(query.page) }}' } },
        { type: 'set', name: 'b', fields: { total: '{{ $trigger.body.amount * 2 }}', x: '{{ order }}' } },
      ]),
    ).toEqual({ 'body.order.id': ['a'], 'query.page': ['a'], 'body.amount': ['b'] });
  });

  it('stops a path at its first filter, and does not read inside predicates as the item', () => {
    expect(
      read([{ type: 'set', name: 'a', fields: { n: '{{ $count(body.lines[price > 2].sku) }}' } }]),
    ).toEqual({
      'body.lines': ['a'],
    });
  });

  it("follows branches (their first step sees the step's input), not loops", () => {
    expect(
      read([
        {
          type: 'switch',
          name: 'route',
          value: '{{ headers."x-github-event" }}',
          cases: [
            { equals: 'push', steps: [{ type: 'set', name: 'push', fields: { r: '{{ body.ref }}' } }] },
          ],
          default: [{ type: 'set', name: 'other', fields: { a: '{{ $trigger.body.action }}' } }],
        },
        {
          type: 'forEach',
          name: 'each',
          items: '{{ $trigger.body.commits }}',
          steps: [{ type: 'set', name: 'c', fields: { id: '{{ id }}' } }],
        },
      ]),
    ).toEqual({
      'headers.x-github-event': ['route'],
      'body.ref': ['push'],
      'body.action': ['other'],
      'body.commits': ['each'],
    });
  });

  it('skips code steps and expressions that do not parse', () => {
    expect(
      read([
        { type: 'code', name: 'js', source: 'return $trigger.body.x' },
        { type: 'set', name: 'bad', fields: { a: '{{ body.( }}' } },
      ]),
    ).toEqual({});
  });
});
