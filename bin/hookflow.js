#!/usr/bin/env node
// The `hookflow` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (`npm start` runs it for you).
import fs from 'node:fs';

const entry = new URL('../dist/cli.js', import.meta.url);
if (!fs.existsSync(entry)) {
  console.error('hookflow: dist/ is missing. Run `npm run build` (or `npm start`, which builds first).');
  process.exit(2);
}
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
