#!/usr/bin/env node
// The `hookflow` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (run automatically by `npm start` and by `npm install` through the `prepare` script).
import { main } from '../dist/cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  },
);
