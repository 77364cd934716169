import { OPEN_NETWORK, Outbound } from '../../../src/engine/network.js';
import type { StepContext } from '../../../src/engine/steps/types.js';

export function stepContext(input: unknown = {}, over: Partial<StepContext> = {}): StepContext {
  return { input, signal: new AbortController().signal, outbound: new Outbound(OPEN_NETWORK), ...over };
}
