/**
 * With the default configuration an `http` step cannot reach loopback or private addresses: the
 * execution fails with the refusal on the step, and nothing reaches the service.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createActiveWorkflow, startTestServer, type TestServer } from '../helpers/server.js';
import { type Downstream, FORM, finishedExecution, startDownstream } from './int-helpers.js';

let server: TestServer;
let downstream: Downstream;

beforeAll(async () => {
  downstream = await startDownstream();
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
  await downstream?.close();
});

it('refuses loopback by default and says how to allow it', async () => {
  expect(server.config.engine.allowPrivateNetwork).toBe(false);
  await createActiveWorkflow(server, {
    name: 'internal',
    trigger: { path: 'internal' },
    steps: [{ name: 'call', type: 'http', url: `${downstream.url}/echo` }],
  });
  const res = await fetch(`${server.url}/webhook/internal`, { method: 'POST', headers: FORM, body: 'a=1' });
  expect(res.status).toBe(200);
  const execution = await finishedExecution(server, res.headers.get('x-hookflow-execution-id')!);
  expect(execution.status).toBe('failed');
  expect(execution.error).toMatchObject({ step: 'call', field: '/url' });
  expect(execution.error.message).toContain('it is a loopback address');
  expect(execution.error.message).toContain('HOOKFLOW_ALLOW_PRIVATE_NETWORK=true');
  expect(downstream.received).toEqual([]);
});
