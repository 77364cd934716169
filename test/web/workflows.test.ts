import { afterEach, describe, expect, it, vi } from 'vitest';
import { lastExecution, listAllWorkflows, setActive, triggerInput } from '../../web/src/lib/workflows.js';
import type { Workflow } from '../../web/src/types.js';

interface Call {
  method: string;
  url: string;
}

/** Answers every request with `answer(url)` as JSON; records the calls. */
function fakeFetch(answer: (url: string) => unknown): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
    calls.push({ method: String(init.method), url });
    return new Response(JSON.stringify(answer(url)), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  });
  return calls;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

const wf = (id: string) => ({ id, name: id }) as unknown as Workflow;

describe('listAllWorkflows', () => {
  it('follows the cursor through every page, 200 at a time', async () => {
    const calls = fakeFetch((url) => {
      const cursor = new URL(url, 'http://x').searchParams.get('cursor');
      if (cursor === null) return { items: [wf('a'), wf('b')], nextCursor: 'c1' };
      if (cursor === 'c1') return { items: [wf('c')], nextCursor: 'c2' };
      return { items: [wf('d')], nextCursor: null };
    });
    const all = await listAllWorkflows();
    expect(all.map((w) => w.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(calls).toEqual([
      { method: 'GET', url: '/api/v1/workflows?limit=200' },
      { method: 'GET', url: '/api/v1/workflows?limit=200&cursor=c1' },
      { method: 'GET', url: '/api/v1/workflows?limit=200&cursor=c2' },
    ]);
  });

  it('stops asking for pages once it has max workflows', async () => {
    let page = 0;
    const calls = fakeFetch(() => {
      page++;
      return { items: [wf(`${page}a`), wf(`${page}b`)], nextCursor: `after${page}` };
    });
    const all = await listAllWorkflows(4);
    expect(calls).toHaveLength(2);
    expect(all.map((w) => w.id)).toEqual(['1a', '1b', '2a', '2b']);
  });

  it('gives an empty list when there are no workflows', async () => {
    const calls = fakeFetch(() => ({ items: [], nextCursor: null }));
    expect(await listAllWorkflows()).toEqual([]);
    expect(calls).toHaveLength(1);
  });
});

describe('lastExecution', () => {
  it('asks for the newest execution of the workflow, in the mode given', async () => {
    const calls = fakeFetch(() => ({ items: [{ id: 'e1' }], nextCursor: 'n' }));
    expect(await lastExecution('wf 1', 'test')).toEqual({ id: 'e1' });
    expect(await lastExecution('wf/2')).toEqual({ id: 'e1' });
    expect(calls).toEqual([
      { method: 'GET', url: '/api/v1/executions?workflowId=wf+1&mode=test&limit=1' },
      { method: 'GET', url: '/api/v1/executions?workflowId=wf%2F2&limit=1' },
    ]);
  });

  it('is undefined when the workflow has not run', async () => {
    fakeFetch(() => ({ items: [], nextCursor: null }));
    expect(await lastExecution('wf-1')).toBeUndefined();
  });
});

describe('setActive', () => {
  it('posts to activate or deactivate, with the id escaped', async () => {
    const calls = fakeFetch(() => ({ id: 'x' }));
    await setActive('wf-1', true);
    await setActive('a/b?c', false);
    expect(calls).toEqual([
      { method: 'POST', url: '/api/v1/workflows/wf-1/activate' },
      { method: 'POST', url: '/api/v1/workflows/a%2Fb%3Fc/deactivate' },
    ]);
  });
});

describe('triggerInput', () => {
  it('drops the URLs the server computed and keeps everything else', () => {
    const trigger = {
      type: 'webhook' as const,
      methods: ['POST' as const],
      path: 'orders',
      auth: { type: 'none' as const },
      response: { mode: 'immediately' as const },
      options: { maxBodyBytes: 10 },
      testUrl: 'http://h/webhook-test/orders',
      productionUrl: 'http://h/webhook/orders',
    };
    const w = { ...wf('a'), trigger };
    expect(triggerInput(w)).toEqual({
      type: 'webhook',
      methods: ['POST'],
      path: 'orders',
      auth: { type: 'none' },
      response: { mode: 'immediately' },
      options: { maxBodyBytes: 10 },
    });
    expect(w.trigger.testUrl).toBe('http://h/webhook-test/orders');
  });
});
