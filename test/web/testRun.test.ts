import { describe, expect, it } from 'vitest';
import { runFinished, staleness, stepRuns } from '../../web/src/lib/testRun.js';
import type { Execution, ExecutionStep, Step } from '../../web/src/types.js';

const rec = (name: string, type: string, extra: Partial<ExecutionStep> = {}): ExecutionStep => ({
  name,
  type,
  status: 'succeeded',
  output: { from: name },
  error: null,
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:00.001Z',
  ...extra,
});

const run = (status: Execution['status'], steps: ExecutionStep[], version = 3): Execution => ({
  id: 'ex1',
  workflowId: 'w1',
  workflowVersion: version,
  mode: 'test',
  status,
  trigger: {},
  steps,
  error: null,
  attempt: 1,
  retryOf: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  startedAt: null,
  finishedAt: null,
});

const router: Step[] = [
  {
    name: 'route',
    type: 'switch',
    value: '{{ headers."x-github-event" }}',
    cases: [
      {
        equals: 'push',
        steps: [
          {
            name: 'each',
            type: 'forEach',
            items: '{{ body.commits }}',
            steps: [{ name: 'js', type: 'code', source: 'return $item' }],
          },
        ],
      },
      { equals: 'issues', steps: [{ name: 'issue', type: 'set', fields: {} }] },
    ],
    default: [{ name: 'stop', type: 'fail', message: 'no' }],
  } as Step,
  { name: 'after', type: 'set', fields: {} } as Step,
];

describe('stepRuns', () => {
  it('gives each step of the draft its record by pointer: the branch taken, a loop by its first failed iteration', () => {
    const each = rec('each', 'forEach', {
      status: 'failed',
      error: { message: 'boom' },
      iterations: [
        { index: 0, status: 'succeeded', steps: [rec('js', 'code', { output: 1, logs: ['a'] })] },
        {
          index: 1,
          status: 'failed',
          steps: [rec('js', 'code', { status: 'failed', output: null, error: { message: 'boom' } })],
        },
      ],
    });
    const out = stepRuns(
      router,
      run('failed', [rec('route', 'switch', { status: 'failed', branch: 0, steps: [each] })]),
      undefined,
    );
    expect(out['/steps/0']).toMatchObject({ executionId: 'ex1', version: 3, status: 'failed' });
    expect(out['/steps/0/cases/0/steps/0']).toMatchObject({ status: 'failed', error: { message: 'boom' } });
    expect(out['/steps/0/cases/0/steps/0/steps/0']).toMatchObject({
      status: 'failed',
      error: { message: 'boom' },
    });
    // Branches not taken have no verdict; a step after the failure in a list that ran was not run.
    expect(out['/steps/0/cases/1/steps/0']).toBeUndefined();
    expect(out['/steps/0/default/0']).toBeUndefined();
    expect(out['/steps/1']).toMatchObject({ status: 'notRun' });
  });

  it('says pending while the run goes on, and nothing for a step a succeeded run did not have', () => {
    const going = stepRuns(
      router,
      run('running', [rec('route', 'switch', { branch: 1, steps: [rec('issue', 'set')] })]),
      undefined,
    );
    expect(going['/steps/0/cases/1/steps/0']).toMatchObject({
      status: 'succeeded',
      output: { from: 'issue' },
    });
    expect(going['/steps/1']).toMatchObject({ status: 'pending' });
    const done = stepRuns(
      router,
      run('succeeded', [rec('route', 'switch', { branch: 1, steps: [] })]),
      undefined,
    );
    expect(done['/steps/1']).toBeUndefined();
    expect(done['/steps/0/cases/1/steps/0']).toBeUndefined();
  });

  it('matches records by name and type, and marks every result stale when told', () => {
    const renamed = stepRuns(
      [{ name: 'route', type: 'set', fields: {} } as Step],
      run('succeeded', [rec('route', 'switch')]),
      'from v3, before your edits',
    );
    expect(renamed['/steps/0']).toBeUndefined();
    const stale = stepRuns(
      router,
      run('failed', [rec('route', 'switch', { status: 'failed' })]),
      'from v3, before your edits',
    );
    expect(stale['/steps/0']).toMatchObject({ status: 'failed', stale: 'from v3, before your edits' });
  });
});

describe('staleness', () => {
  it.each([
    [3, 3, false, undefined],
    [3, 4, false, 'from v3, before your edits'],
    [3, 4, true, 'from v3, before your edits'],
    [4, 4, true, 'from v4, before your unsaved edits'],
  ])('a run of v%i with v%i saved (unsaved edits: %s) is %j', (runV, savedV, dirty, said) => {
    expect(staleness(runV, savedV, dirty)).toBe(said);
  });

  it('knows a finished run', () => {
    expect(
      ['succeeded', 'failed', 'filtered', 'skipped'].every((s) =>
        runFinished({ status: s as Execution['status'] }),
      ),
    ).toBe(true);
    expect(
      ['queued', 'running', 'waiting'].some((s) => runFinished({ status: s as Execution['status'] })),
    ).toBe(false);
  });
});
