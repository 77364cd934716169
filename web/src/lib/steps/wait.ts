import type { DraftOf, StepForm } from './types';
import { clip, numberish, requiredText, valueToText } from './values';

/**
 * `wait` (SPEC 7b, 7g): by a number of seconds or until a time; or for a call to the execution's
 * resume URL, or for another webhook workflow's request whose `match` gives `equals`.
 */
export type WaitDraft = DraftOf<
  'wait',
  {
    waitBy: 'seconds' | 'until' | 'call' | 'event';
    seconds: string;
    until: string;
    timeoutSeconds: string;
    workflowId: string;
    match: string;
    equals: string;
  }
>;

function waitBy(step: Record<string, unknown>): WaitDraft['waitBy'] {
  if (step.for === 'call' || step.for === 'event') return step.for;
  return step.until !== undefined && step.seconds === undefined ? 'until' : 'seconds';
}

export const waitForm: StepForm<WaitDraft> = {
  type: 'wait',
  label: 'Wait',
  description: 'Pause the run for a while, until a time, a call to its resume URL, or an event',
  icon: '◷',
  keys: ['for', 'seconds', 'until', 'timeoutSeconds', 'workflowId', 'match', 'equals'],
  read: (step) => ({
    waitBy: waitBy(step),
    seconds: step.seconds === undefined ? '' : String(step.seconds),
    until: valueToText(step.until),
    timeoutSeconds: step.timeoutSeconds === undefined ? '' : String(step.timeoutSeconds),
    workflowId: typeof step.workflowId === 'string' ? step.workflowId : '',
    match: valueToText(step.match),
    equals: valueToText(step.equals),
  }),
  start: () => ({ seconds: '60' }),
  summary: (d) => {
    switch (d.waitBy) {
      case 'until':
        return `Until ${clip(d.until)}`;
      case 'call':
        return 'For a call to its resume URL';
      case 'event':
        return d.equals ? `For an event about ${clip(d.equals)}` : 'For an event';
      default:
        return `${d.seconds || '?'} s`;
    }
  },
  write(d, step, at, problems) {
    if (d.waitBy === 'call' || d.waitBy === 'event') {
      step.for = d.waitBy;
      const timeout = numberish(d.timeoutSeconds);
      if (timeout !== undefined) step.timeoutSeconds = timeout;
      if (d.waitBy === 'event') {
        requiredText(
          d,
          step,
          'workflowId',
          at,
          problems,
          'needs the webhook workflow whose requests it waits for',
        );
        requiredText(d, step, 'match', at, problems, 'needs an expression on that workflow’s request');
        requiredText(d, step, 'equals', at, problems, 'needs the value the match must give');
      }
      return;
    }
    if (d.waitBy === 'until') {
      requiredText(d, step, 'until', at, problems, 'needs a time (ISO-8601, or an expression giving one)');
      return;
    }
    const seconds = numberish(d.seconds);
    if (seconds === undefined)
      problems.push({ field: `${at}/seconds`, message: 'needs a number of seconds' });
    step.seconds = seconds ?? '';
  },
};
