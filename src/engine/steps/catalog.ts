/**
 * What the model and the UI need to know of each step type, which may not import the engine
 * (.dependency-cruiser.cjs): its nested lists, whether it is pure, its description, the fields
 * that take `$secrets`. Kept as src/shared/step-catalog.ts, written by `npm run catalog`
 * (scripts/step-catalog.js) from the registry; test/engine/step-catalog.test.ts fails when the two
 * differ.
 */
import type { StepCatalogEntry } from '../../shared/step-lists.js';
import { STEP_TYPES, type StepRegistry } from './index.js';

export function stepCatalog(types: StepRegistry = STEP_TYPES): Record<string, StepCatalogEntry> {
  const out: Record<string, StepCatalogEntry> = {};
  for (const [name, t] of types)
    out[name] = {
      lists: [...(t.lists ?? [])],
      pure: t.pure === true,
      description: t.description,
      secretFields: [...(t.secretFields ?? [])],
    };
  return out;
}

/** src/shared/step-catalog.ts as `npm run catalog` writes it (before `biome format`). */
export function catalogSource(types: StepRegistry = STEP_TYPES): string {
  return `/**
 * Each step type's nested lists, purity, description and the fields that take $secrets, for the
 * model and the UI (which may not import the engine). Written by \`npm run catalog\` from src/engine/steps/: do not edit.
 */
import type { StepCatalogEntry } from './step-lists.js';

export const STEP_CATALOG: Readonly<Record<string, StepCatalogEntry>> = ${JSON.stringify(stepCatalog(types), null, 2)};

/** The nested lists a step type declares (undefined: none, or a type this catalog does not know). */
export function catalogLists(type: unknown): readonly string[] | undefined {
  return typeof type === 'string' && Object.hasOwn(STEP_CATALOG, type) ? STEP_CATALOG[type]!.lists : undefined;
}

/** Whether a step type takes \`$secrets\` at \`field\` (a JSON pointer inside the step, \`/headers/Authorization\`). */
export function catalogAllowsSecrets(type: unknown, field: string): boolean {
  if (typeof type !== 'string' || !Object.hasOwn(STEP_CATALOG, type)) return false;
  return STEP_CATALOG[type]!.secretFields.some((f) => field === f || field.startsWith(\`\${f}/\`));
}
`;
}
