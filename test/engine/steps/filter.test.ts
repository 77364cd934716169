import { describe, expect, it } from 'vitest';
import { filterStep } from '../../../src/engine/steps/filter.js';
import { StepFailure } from '../../../src/engine/steps/types.js';
import { stepContext } from './helpers.js';

describe('filter step', () => {
  it('passes the item on when the condition is true', async () => {
    expect(await filterStep.run({ condition: true }, stepContext({ a: 1 }))).toEqual({ output: { a: 1 } });
  });

  it.each([false, null, undefined])(
    'stops the run (filtered) when the condition is %s',
    async (condition) => {
      expect(await filterStep.run({ condition }, stepContext({ a: 1 }))).toEqual({
        output: null,
        filtered: true,
      });
    },
  );

  it.each(['yes', 1, [true], { a: 1 }])('refuses a condition that is not true or false (%j)', (condition) => {
    let err: StepFailure | undefined;
    try {
      filterStep.run({ condition }, stepContext());
    } catch (e) {
      err = e as StepFailure;
    }
    expect(err).toBeInstanceOf(StepFailure);
    expect(err?.field).toBe('/condition');
    expect(err?.message).toMatch(/must be true or false/);
  });
});
