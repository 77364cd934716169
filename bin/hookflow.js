#!/usr/bin/env node
// The `hookflow` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (`npm start` runs it for you).
import fs from 'node:fs';

const entry = new URL('../dist/cli.js', import.meta.url);
if (!fs.existsSync(entry)) {
  console.error('hookflow: dist/ is missing. Run `npm run build` (or `npm start`, which builds first).');
  process.exit(2);
}
// First, before the modules load (see src/tick-objects.ts: a full GC while they load made every
// later process.nextTick ~5× slower).
const { keepTickObjectShape } = await import(new URL('../dist/tick-objects.js', import.meta.url).href);
keepTickObjectShape();
const { main } = await import(entry.href);
main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  },
);
