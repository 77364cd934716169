import { describe, expect, it } from 'vitest';
import type { Step } from '../../web/src/types.js';
import {
  type DiffInput,
  diffSummary,
  diffVersions,
  isSame,
  valueChanges,
} from '../../web/src/lib/versionDiff.js';

const set = (name: string, fields: Record<string, unknown>): Step => ({ name, type: 'set', fields });
const trigger = { type: 'webhook', path: 'orders', methods: ['POST'] };
const version = (steps: Step[], more: Partial<DiffInput> = {}): DiffInput => ({
  name: 'router',
  trigger,
  steps,
  ...more,
});

describe('valueChanges', () => {
  it.each([
    ['equal values', { a: 1 }, { a: 1 }, []],
    [
      'a changed leaf',
      { a: { b: 1 } },
      { a: { b: 2 } },
      [{ path: 'a.b', kind: 'changed', before: 1, after: 2 }],
    ],
    ['an added key', { a: 1 }, { a: 1, b: 'x' }, [{ path: 'b', kind: 'added', after: 'x' }]],
    ['a removed key', { a: 1, b: 'x' }, { a: 1 }, [{ path: 'b', kind: 'removed', before: 'x' }]],
    [
      'an element of an array of the same length',
      { m: ['GET', 'POST'] },
      { m: ['GET', 'PUT'] },
      [{ path: 'm[1]', kind: 'changed', before: 'POST', after: 'PUT' }],
    ],
    [
      'an array that grew, as one change',
      { m: ['GET'] },
      { m: ['GET', 'PUT'] },
      [{ path: 'm', kind: 'changed', before: ['GET'], after: ['GET', 'PUT'] }],
    ],
    ['a type change', { a: '1' }, { a: 1 }, [{ path: 'a', kind: 'changed', before: '1', after: 1 }]],
  ])('%s', (_what, before, after, expected) => {
    expect(valueChanges(before, after)).toEqual(expected);
  });
});

describe('diffVersions', () => {
  it('finds nothing between equal versions', () => {
    const v = version([set('a', { x: 1 })], { settings: { timeoutMs: 5 } });
    const diff = diffVersions(v, structuredClone(v));
    expect(isSame(diff)).toBe(true);
    expect(diffSummary(diff)).toEqual([]);
  });

  it('gives each changed field of a step with its old and new value', () => {
    const diff = diffVersions(
      version([set('shape', { total: '{{ body.total }}', currency: 'EUR' })]),
      version([set('shape', { total: '{{ body.amount }}', currency: 'EUR', note: 'hi' })]),
    );
    expect(diff.steps).toEqual([
      {
        name: 'shape',
        type: 'set',
        kind: 'kept',
        place: { list: 'top level', position: 1 },
        fields: [
          { path: 'fields.total', kind: 'changed', before: '{{ body.total }}', after: '{{ body.amount }}' },
          { path: 'fields.note', kind: 'added', after: 'hi' },
        ],
      },
    ]);
    expect(diffSummary(diff)).toEqual(['1 step changed']);
  });

  it('matches steps by name: an inserted step is added, the ones after it are not moved', () => {
    const diff = diffVersions(
      version([set('a', {}), set('b', {}), set('c', {})]),
      version([set('new', { x: 1 }), set('a', {}), set('b', {}), set('c', {})]),
    );
    expect(diff.steps).toEqual([
      {
        name: 'new',
        type: 'set',
        kind: 'added',
        fields: [],
        place: { list: 'top level', position: 1 },
        config: { name: 'new', type: 'set', fields: { x: 1 } },
      },
    ]);
  });

  it('says which steps were removed, last', () => {
    const diff = diffVersions(version([set('a', {}), set('old', {})]), version([set('a', { y: 1 })]));
    expect(diff.steps.map((s) => [s.name, s.kind])).toEqual([
      ['a', 'kept'],
      ['old', 'removed'],
    ]);
    expect(diff.steps[1]!.place).toEqual({ list: 'top level', position: 2 });
    expect(diffSummary(diff)).toEqual(['1 step removed', '1 step changed']);
  });

  it('marks one step dragged up as the one move, not every step it passed', () => {
    const diff = diffVersions(
      version([set('a', {}), set('b', {}), set('c', {}), set('d', {})]),
      version([set('d', {}), set('a', {}), set('b', {}), set('c', {})]),
    );
    expect(diff.steps).toEqual([
      {
        name: 'd',
        type: 'set',
        kind: 'kept',
        fields: [],
        place: { list: 'top level', position: 1 },
        moved: { from: { list: 'top level', position: 4 }, to: { list: 'top level', position: 1 } },
      },
    ]);
    expect(diffSummary(diff)).toEqual(['1 step moved']);
  });

  it('reads nested lists through the step catalog: a step moved into a switch case, a changed case value', () => {
    const route = (cases: unknown[], def: Step[] = []): Step => ({
      name: 'route',
      type: 'switch',
      value: '{{ headers.x-github-event }}',
      cases,
      default: def,
    });
    const before = version([
      route([{ equals: 'push', steps: [set('on push', { a: 1 })] }]),
      set('log', { b: 1 }),
    ]);
    const after = version([
      route([{ equals: 'pull_request', steps: [set('on push', { a: 2 }), set('log', { b: 1 })] }]),
    ]);
    const diff = diffVersions(before, after);
    expect(diff.steps).toEqual([
      {
        name: 'route',
        type: 'switch',
        kind: 'kept',
        place: { list: 'top level', position: 1 },
        fields: [{ path: 'cases[0].equals', kind: 'changed', before: 'push', after: 'pull_request' }],
      },
      {
        name: 'on push',
        type: 'set',
        kind: 'kept',
        place: { list: 'route › case 1', position: 1 },
        fields: [{ path: 'fields.a', kind: 'changed', before: 1, after: 2 }],
      },
      {
        name: 'log',
        type: 'set',
        kind: 'kept',
        fields: [],
        place: { list: 'route › case 1', position: 2 },
        moved: { from: { list: 'top level', position: 2 }, to: { list: 'route › case 1', position: 2 } },
      },
    ]);
  });

  it('names the steps of if and forEach lists by their holder', () => {
    const diff = diffVersions(
      version([{ name: 'each', type: 'forEach', items: '{{ body.lines }}', steps: [] }]),
      version([
        { name: 'each', type: 'forEach', items: '{{ body.lines }}', steps: [set('line', {})] },
        { name: 'check', type: 'if', condition: '{{ true }}', then: [], else: [set('nope', {})] },
      ]),
    );
    expect(diff.steps.map((s) => [s.name, s.kind, s.place.list])).toEqual([
      ['line', 'added', 'each › steps'],
      ['check', 'added', 'top level'],
      ['nope', 'added', 'check › else'],
    ]);
  });

  it('gives trigger, settings and name changes as fields', () => {
    const diff = diffVersions(
      version([], { settings: { timeoutMs: 1000 } }),
      version([], {
        name: 'router v2',
        trigger: { ...trigger, path: 'orders/v2', methods: ['POST', 'PUT'] },
        settings: { timeoutMs: 2000, errorWorkflowId: 'w1' },
      }),
    );
    expect(diff.name).toEqual({ path: 'name', kind: 'changed', before: 'router', after: 'router v2' });
    expect(diff.trigger).toEqual([
      { path: 'path', kind: 'changed', before: 'orders', after: 'orders/v2' },
      { path: 'methods', kind: 'changed', before: ['POST'], after: ['POST', 'PUT'] },
    ]);
    expect(diff.settings).toEqual([
      { path: 'timeoutMs', kind: 'changed', before: 1000, after: 2000 },
      { path: 'errorWorkflowId', kind: 'added', after: 'w1' },
    ]);
    expect(diffSummary(diff)).toEqual(['name', 'trigger', 'settings']);
  });
});
