import { execFileSync } from 'node:child_process';

/** Tests that spawn `bin/hookflow.js` need dist/ current: compile once per run (type errors are `npm run typecheck`'s job). */
export default function setup(): void {
  execFileSync(
    process.execPath,
    ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--noCheck'],
    { stdio: 'inherit' },
  );
}
