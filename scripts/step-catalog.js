// `npm run catalog`: writes src/shared/step-catalog.ts from the step registry (src/engine/steps/),
// loading the TypeScript through Vite's module runner, then formats it as Biome would.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runnerImport } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const file = 'src/shared/step-catalog.ts';
const { module } = await runnerImport(`${root}src/engine/steps/catalog.ts`, { configFile: false, root });
writeFileSync(`${root}${file}`, module.catalogSource());
execFileSync('npx', ['biome', 'format', '--write', file], { cwd: root, stdio: 'inherit' });
