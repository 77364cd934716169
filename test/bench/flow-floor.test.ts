/**
 * The bench's flow floor (bench/floor-server.js `benchFlow`) stands for the least the workflow case
 * can cost, so it must do the same work: the same step records, stored the same way, as hookflow's
 * engine makes for the bench workflow (FLOW_STEPS). Only the clock readings may differ.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/run.js';
import type { Step, Workflow } from '../../src/model/workflow.js';
import { stepsJson } from '../../src/store/executions.js';

interface FlowRun {
  status: string;
  steps: Record<string, unknown>[];
}

// bench/ is plain JavaScript run by node, without type declarations.
const floor = (await import(pathToFileURL(path.resolve('bench/floor-server.js')).href)) as {
  FLOW_STEPS: Step[];
  benchFlow: (item: unknown, startedAt: string) => FlowRun;
};

const engine = new Engine({ allowPrivateNetwork: false, executionTimeoutMs: 5_000 });
afterAll(() => engine.close());

const workflow: Workflow = {
  id: 'bench-flow',
  name: 'bench-flow',
  active: true,
  version: 1,
  publishedVersion: 1,
  trigger: {} as Workflow['trigger'],
  steps: floor.FLOW_STEPS,
  createdAt: '',
  updatedAt: '',
};

/** The SPEC 4 item of the bench's request, with a form body. */
const item = (param1: string) => ({
  method: 'POST',
  path: 'bench-flow',
  params: {},
  query: {},
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: { param1, param2: 'b' },
  files: [],
  webhookUrl: 'http://localhost:5678/webhook/bench-flow',
  executionMode: 'production',
  receivedAt: '2026-11-24T21:00:00.000Z',
});

/** The stored steps JSON with every clock reading replaced. */
const withoutClock = (json: string) => json.replace(/"(startedAt|finishedAt)":"[^"]+"/g, '"$1":"T"');

describe('the bench flow floor', () => {
  it.each([
    ['a request the filter lets through', 'a', 'succeeded'],
    ['a request the filter stops', 'z', 'filtered'],
  ])('stores what hookflow stores for %s', async (_, param1, status) => {
    const run = await engine.run(workflow, item(param1), { executionId: 'ex-1', mode: 'production' });
    const floorRun = floor.benchFlow(item(param1), new Date().toISOString());

    expect(run.status).toBe(status);
    expect(floorRun.status).toBe(run.status);
    expect(withoutClock(JSON.stringify(floorRun.steps))).toBe(withoutClock(stepsJson(run.steps)));
  });
});
