import { beforeEach, describe, expect, it } from 'vitest';
import type { Method } from '../../src/shared/path.js';
import { type MatchResult, type RouteEntry, TriggerRegistry } from '../../src/webhooks/registry.js';

function route(workflowId: string, methods: Method[], path: string): RouteEntry<string> {
  return { workflowId, path, methods, value: `value-of-${workflowId}` };
}

const ROUTES: RouteEntry<string>[] = [
  route('wf-new', ['POST'], 'orders/new'),
  route('wf-order', ['GET', 'POST'], 'orders/:id'),
  route('wf-items', ['GET'], '/orders/:orderId/items/:itemId/'),
  route('wf-deep-static', ['POST'], 'a/static/x'),
  route('wf-deep-param', ['POST'], 'a/:p/y'),
  route('wf-status-get', ['GET'], 'status'),
  route('wf-status-put', ['PUT'], 'status'),
  route('wf-ping-get', ['GET'], 'ping'),
  route('wf-ping-head', ['HEAD'], 'ping'),
  route('wf-case', ['POST'], 'Case/Sensitive'),
  route('wf-files', ['GET'], 'files/:name'),
  route('wf-by-id', ['GET'], 'things/:id'),
  route('wf-by-x', ['POST'], 'things/:x'), // same shape, other method, other parameter name
];

type Expected = { found: string; params?: Record<string, string> } | { allow: Method[] } | 'not_found';

function summarize(result: MatchResult<string>): Expected {
  if (result.kind === 'found') {
    expect(result.entry.value).toBe(`value-of-${result.entry.workflowId}`);
    return { found: result.entry.workflowId, params: result.params };
  }
  if (result.kind === 'method_not_allowed') return { allow: result.allow };
  return 'not_found';
}

describe('TriggerRegistry.match', () => {
  const registry = new TriggerRegistry<string>();
  registry.replaceAll(ROUTES);

  it.each<[string, string, string, Expected]>([
    // static beats parameter
    ['static wins', 'POST', 'orders/new', { found: 'wf-new', params: {} }],
    ['param when static differs', 'POST', 'orders/42', { found: 'wf-order', params: { id: '42' } }],
    ['param when static lacks the method', 'GET', 'orders/new', { found: 'wf-order', params: { id: 'new' } }],
    // backtracking: the static branch `a/static` has no `y` child, the param branch does
    ['static branch', 'POST', 'a/static/x', { found: 'wf-deep-static', params: {} }],
    ['backtrack to param', 'POST', 'a/static/y', { found: 'wf-deep-param', params: { p: 'static' } }],
    ['param branch', 'POST', 'a/other/y', { found: 'wf-deep-param', params: { p: 'other' } }],
    ['no branch fits', 'POST', 'a/static/z', 'not_found'],
    ['prefix of a route', 'POST', 'a/static', 'not_found'],
    ['longer than any route', 'POST', 'a/static/x/more', 'not_found'],
    // several parameters
    ['two params', 'GET', 'orders/7/items/9', { found: 'wf-items', params: { orderId: '7', itemId: '9' } }],
    // same shape, different workflows and parameter names per method
    ['shape shared, GET', 'GET', 'things/1', { found: 'wf-by-id', params: { id: '1' } }],
    ['shape shared, POST', 'POST', 'things/1', { found: 'wf-by-x', params: { x: '1' } }],
    // slashes
    ['leading and trailing slashes', 'POST', '/orders/42/', { found: 'wf-order', params: { id: '42' } }],
    ['repeated outer slashes', 'POST', '//orders/42//', { found: 'wf-order', params: { id: '42' } }],
    ['double slash inside', 'POST', 'orders//42', 'not_found'],
    ['empty path', 'POST', '', 'not_found'],
    ['only a slash', 'POST', '/', 'not_found'],
    // case-sensitive
    ['exact case', 'POST', 'Case/Sensitive', { found: 'wf-case', params: {} }],
    ['other case', 'POST', 'case/sensitive', 'not_found'],
    // percent-decoding
    ['encoded space', 'GET', 'files/hello%20world', { found: 'wf-files', params: { name: 'hello world' } }],
    [
      'encoded slash stays in the param',
      'GET',
      'files/a%2Fb',
      { found: 'wf-files', params: { name: 'a/b' } },
    ],
    ['utf-8', 'GET', 'files/%E2%9C%93', { found: 'wf-files', params: { name: '✓' } }],
    ['plus is not a space in paths', 'GET', 'files/a+b', { found: 'wf-files', params: { name: 'a+b' } }],
    ['encoded static segment', 'POST', 'ord%65rs/new', { found: 'wf-new', params: {} }],
    [
      'encoded colon is not a param',
      'GET',
      'files/%3Aname',
      { found: 'wf-files', params: { name: ':name' } },
    ],
    ['truncated escape', 'GET', 'files/%E0%A4%A', 'not_found'],
    ['bad hex', 'GET', 'files/%zz', 'not_found'],
    ['lone percent', 'GET', 'files/%', 'not_found'],
    ['overlong utf-8', 'GET', 'files/%C0%AF', 'not_found'],
    ['utf-16 surrogate', 'GET', 'files/%ED%A0%80', 'not_found'],
    // 405 and HEAD
    ['405 on a param route', 'DELETE', 'orders/42', { allow: ['GET', 'HEAD', 'POST'] }],
    ['405 allow is the union of matching routes', 'DELETE', 'orders/new', { allow: ['GET', 'HEAD', 'POST'] }],
    ['405 across workflows on one path', 'PATCH', 'status', { allow: ['GET', 'HEAD', 'PUT'] }],
    ['405 without GET has no HEAD', 'GET', 'a/static/x', { allow: ['POST'] }],
    ['405 for unknown methods', 'OPTIONS', 'status', { allow: ['GET', 'HEAD', 'PUT'] }],
    ['methods are upper-case', 'get', 'status', { allow: ['GET', 'HEAD', 'PUT'] }],
    ['HEAD served by GET', 'HEAD', 'status', { found: 'wf-status-get', params: {} }],
    ['HEAD via GET on a param route', 'HEAD', 'files/x', { found: 'wf-files', params: { name: 'x' } }],
    ['explicit HEAD route wins', 'HEAD', 'ping', { found: 'wf-ping-head', params: {} }],
    ['GET next to a HEAD route', 'GET', 'ping', { found: 'wf-ping-get', params: {} }],
    // hostile paths
    ['dot-dot prefix', 'POST', '../orders/42', 'not_found'],
    ['dot-dot inside', 'POST', 'orders/../orders/42', 'not_found'],
    ['dot-dot as a param value', 'GET', 'files/..', 'not_found'],
    ['encoded dot-dot', 'GET', 'files/%2e%2e', 'not_found'],
    ['dot as a param value', 'GET', 'files/.', 'not_found'],
    ['NUL', 'GET', 'files/%00', 'not_found'],
    ['NUL inside', 'GET', 'files/a%00b', 'not_found'],
    ['__proto__ as a value', 'GET', 'files/__proto__', { found: 'wf-files', params: { name: '__proto__' } }],
    [
      'long param within limits',
      'GET',
      `files/${'a'.repeat(5000)}`,
      { found: 'wf-files', params: { name: 'a'.repeat(5000) } },
    ],
    ['over the length limit', 'GET', `files/${'a'.repeat(9000)}`, 'not_found'],
    ['many segments', 'GET', 'x/'.repeat(10_000), 'not_found'],
    ['huge input', 'GET', `files/${'%41'.repeat(1_000_000)}`, 'not_found'],
  ])('%s (%s)', (_label, method, path, expected) => {
    expect(summarize(registry.match(method, path))).toEqual(expected);
  });

  it('params carry only own keys', () => {
    const result = registry.match('GET', 'orders/7/items/9');
    expect(result.kind).toBe('found');
    if (result.kind === 'found') expect(Object.keys(result.params)).toEqual(['orderId', 'itemId']);
  });
});

describe('TriggerRegistry.conflict', () => {
  const registry = new TriggerRegistry<string>();
  registry.replaceAll(ROUTES);

  it.each<[string, string, Method[], string | undefined, string | undefined]>([
    ['same path and method', 'orders/:id', ['POST'], undefined, 'wf-order'],
    ['other parameter name', 'orders/:x', ['GET'], undefined, 'wf-order'],
    ['slashes ignored', '/orders/:x/', ['GET'], undefined, 'wf-order'],
    ['any of the methods', 'orders/:x', ['PUT', 'POST'], undefined, 'wf-order'],
    ['other method is free', 'orders/:x', ['PUT'], undefined, undefined],
    ['own workflow ignored', 'orders/:x', ['GET', 'POST'], 'wf-order', undefined],
    ['static vs param is no conflict', 'orders/other', ['GET'], undefined, undefined],
    ['param vs static is no conflict', ':a/static/x', ['POST'], undefined, undefined],
    ['static', 'orders/new', ['POST'], undefined, 'wf-new'],
    ['HEAD does not conflict with GET', 'status', ['HEAD'], undefined, undefined],
    ['prefix of a route', 'orders/:id/items', ['GET'], undefined, undefined],
    ['longer than a route', 'orders/:id/items/:i/more', ['GET'], undefined, undefined],
    ['case-sensitive', 'case/sensitive', ['POST'], undefined, undefined],
    ['invalid path', 'a//b', ['GET'], undefined, undefined],
  ])('%s: %s %j', (_label, path, methods, except, owner) => {
    expect(registry.conflict(path, methods, except)).toBe(owner);
  });
});

describe('TriggerRegistry set / remove / replaceAll', () => {
  let registry: TriggerRegistry<string>;
  beforeEach(() => {
    registry = new TriggerRegistry<string>();
    registry.replaceAll([route('A', ['GET'], 'shared/:id'), route('B', ['PUT'], 'shared/:key')]);
  });

  it('get and size', () => {
    expect(registry.size).toBe(2);
    expect(registry.get('A')).toEqual(route('A', ['GET'], 'shared/:id'));
    expect(registry.get('missing')).toBeUndefined();
  });

  it('set replaces the previous routes of the same workflow', () => {
    registry.set(route('A', ['POST'], 'moved/:id'));
    expect(registry.size).toBe(2);
    expect(registry.match('GET', 'shared/1')).toEqual({ kind: 'method_not_allowed', allow: ['PUT'] });
    expect(summarize(registry.match('POST', 'moved/1'))).toEqual({ found: 'A', params: { id: '1' } });
    expect(registry.get('A')?.path).toBe('moved/:id');
  });

  it('set may keep the same method and shape for the same workflow', () => {
    registry.set(route('A', ['GET', 'HEAD'], 'shared/:renamed'));
    expect(summarize(registry.match('HEAD', 'shared/1'))).toEqual({ found: 'A', params: { renamed: '1' } });
  });

  it.each<[string, RouteEntry<string>]>([
    ['conflicting method+shape', route('C', ['DELETE', 'GET'], 'shared/:other')],
    ['a moved workflow onto a taken route', route('B', ['GET'], '/shared/:x')],
    ['an invalid path', route('C', ['GET'], 'bad path')],
    ['no methods', route('C', [], 'free')],
    ['an unknown method', route('C', ['OPTIONS' as Method], 'free')],
  ])('set throws on %s and changes nothing', (_label, entry) => {
    expect(() => registry.set(entry)).toThrow(Error);
    expect(registry.size).toBe(2);
    expect(registry.get('B')).toEqual(route('B', ['PUT'], 'shared/:key'));
    expect(summarize(registry.match('GET', 'shared/1'))).toEqual({ found: 'A', params: { id: '1' } });
    expect(summarize(registry.match('PUT', 'shared/1'))).toEqual({ found: 'B', params: { key: '1' } });
  });

  it('remove keeps other workflows on the same node', () => {
    registry.remove('A');
    expect(registry.get('A')).toBeUndefined();
    expect(registry.size).toBe(1);
    expect(registry.match('GET', 'shared/1')).toEqual({ kind: 'method_not_allowed', allow: ['PUT'] });
    expect(registry.conflict('shared/:z', ['GET'])).toBeUndefined();
  });

  it('remove prunes emptied nodes and ignores unknown ids', () => {
    registry.set(route('C', ['POST'], 'shared/:id/deeper'));
    registry.remove('C');
    registry.remove('C');
    registry.remove('never-registered');
    expect(registry.match('POST', 'shared/1/deeper')).toEqual({ kind: 'not_found' });
    registry.remove('A');
    registry.remove('B');
    expect(registry.size).toBe(0);
    expect(registry.match('GET', 'shared/1')).toEqual({ kind: 'not_found' });
    // the trie is empty again: internals are private, but a fresh route works as on a new registry
    registry.set(route('D', ['GET'], 'shared'));
    expect(summarize(registry.match('GET', '/shared/'))).toEqual({ found: 'D', params: {} });
  });

  it('replaceAll swaps everything', () => {
    registry.replaceAll([route('Z', ['GET'], 'z')]);
    expect(registry.size).toBe(1);
    expect(registry.get('A')).toBeUndefined();
    expect(registry.match('GET', 'shared/1')).toEqual({ kind: 'not_found' });
    expect(summarize(registry.match('GET', 'z'))).toEqual({ found: 'Z', params: {} });
  });

  it('replaceAll is atomic when an entry conflicts', () => {
    expect(() => registry.replaceAll([route('X', ['GET'], 'x/:a'), route('Y', ['GET'], 'x/:b')])).toThrow(
      /X/,
    );
    expect(registry.size).toBe(2);
    expect(registry.match('GET', 'x/1')).toEqual({ kind: 'not_found' });
    expect(summarize(registry.match('GET', 'shared/1'))).toEqual({ found: 'A', params: { id: '1' } });
  });

  it('replaceAll keeps the last entry of a repeated workflow', () => {
    registry.replaceAll([route('X', ['GET'], 'first'), route('X', ['GET'], 'second')]);
    expect(registry.size).toBe(1);
    expect(registry.match('GET', 'first')).toEqual({ kind: 'not_found' });
    expect(summarize(registry.match('GET', 'second'))).toEqual({ found: 'X', params: {} });
  });
});
