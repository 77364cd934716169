import { describe, expect, it } from 'vitest';
import { stepCatalog } from '../../src/engine/steps/catalog.js';
import { STEP_CATALOG } from '../../src/shared/step-catalog.js';

describe('src/shared/step-catalog.ts', () => {
  it('says what the step registry says (lists, purity, description) — else run npm run catalog', () => {
    expect(
      STEP_CATALOG,
      'src/shared/step-catalog.ts differs from src/engine/steps/: run npm run catalog',
    ).toEqual(stepCatalog());
  });
});
