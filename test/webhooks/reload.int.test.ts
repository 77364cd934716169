/**
 * SPEC 3 "Saving an active workflow applies at once" without a gap: while a workflow is saved over and
 * over, its production URL and its open test URL keep answering 200. Run on PostgreSQL, where every store
 * read yields to the event loop, so a registry left half-updated across a read would be seen by callers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';

const SAVES = 30;

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ postgres: true });
});

afterAll(async () => {
  await server?.close();
});

describe('saving a workflow', () => {
  it('never makes its production or test URL answer 404 meanwhile', async () => {
    const wf = await createActiveWorkflow(server, { name: 'saved', trigger: { path: 'always/on' } });
    const listener = await server.api('POST', `/api/v1/workflows/${wf.id}/test-listener`, {
      keepListening: true,
      timeoutSeconds: 60,
    });
    expect(listener.status).toBe(201);

    const statuses: Record<string, number[]> = { webhook: [], 'webhook-test': [] };
    let saving = true;
    const callers = Object.keys(statuses).map(async (prefix) => {
      while (saving) {
        const batch = await Promise.all(
          Array.from({ length: 5 }, () =>
            fetch(`${server.url}/${prefix}/always/on`, { method: 'POST', body: 'a=1' }).then((r) => r.status),
          ),
        );
        statuses[prefix]!.push(...batch);
      }
    });
    for (let i = 0; i < SAVES; i++) {
      const saved = await server.api('PATCH', `/api/v1/workflows/${wf.id}`, { name: `saved v${i}` });
      expect(saved.status).toBe(200);
      // A save reloads the test route (the draft); publishing reloads the production route. The
      // last save (odd i) stays a draft.
      if (i % 2 === 0) {
        const published = await server.api('POST', `/api/v1/workflows/${wf.id}/publish`);
        expect(published.status).toBe(200);
      }
    }
    saving = false;
    await Promise.all(callers);

    for (const [prefix, seen] of Object.entries(statuses)) {
      expect(seen.length, prefix).toBeGreaterThan(0);
      expect(
        seen.filter((s) => s !== 200),
        prefix,
      ).toEqual([]);
    }
    // The last save is what the next test call runs; the last publish is what production runs.
    const current = await server.api('GET', `/api/v1/workflows/${wf.id}`);
    expect(current.body.publishedVersion).toBeLessThan(current.body.version);
    for (const [prefix, version] of [
      ['webhook-test', current.body.version],
      ['webhook', current.body.publishedVersion],
    ]) {
      const res = await fetch(`${server.url}/${prefix}/always/on`, { method: 'POST', body: 'a=1' });
      const execution = await server.api(
        'GET',
        `/api/v1/executions/${res.headers.get('x-hookflow-execution-id')}`,
      );
      expect(execution.body.workflowVersion, prefix).toBe(version);
    }
  });
});
