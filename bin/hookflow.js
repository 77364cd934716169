#!/usr/bin/env node
// The `hookflow` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (`npm start` runs it for you).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS } from './node-flags.js';

const entry = new URL('../dist/cli.js', import.meta.url);
if (!fs.existsSync(entry)) {
  console.error('hookflow: dist/ is missing. Run `npm run build` (or `npm start`, which builds first).');
  process.exit(2);
}

/** The commands that serve; the others (short-lived utilities) keep V8's defaults and start once. */
const SERVING = new Set(['start', 'webhook', 'worker']);
const args = process.argv.slice(2);

if (SERVING.has(args[0]) && !NODE_FLAGS.every((flag) => process.execArgv.includes(flag))) {
  relaunch();
} else {
  if (process.channel) followParent();
  const { main } = await import(entry.href);
  main(args).then(
    (code) => {
      if (typeof code === 'number') process.exitCode = code;
    },
    (err) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exitCode = 1;
    },
  );
}

/**
 * Runs this command again in a child node with NODE_FLAGS, and becomes its shadow: same stdio,
 * every signal sent to this process passed on once, and this process ends as the child does (its
 * exit code, or killed by the same signal).
 *
 * The child gets a process group of its own (`detached`), so a terminal's Ctrl-C reaches it only
 * through this process: reaching both, it would arrive twice, and a second SIGINT while draining
 * means "stop now". An IPC channel tells the child when this process is gone, even by SIGKILL
 * (see followParent).
 */
function relaunch() {
  const child = spawn(process.execPath, [...NODE_FLAGS, fileURLToPath(import.meta.url), ...args], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    // On Windows `detached` means a console of its own, and there are no process groups.
    detached: process.platform !== 'win32',
  });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const forward = (signal) => child.kill(signal);
  for (const signal of signals) process.on(signal, forward);
  child.on('error', (err) => {
    console.error(`hookflow: could not start node: ${err.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    for (const s of signals) process.off(s, forward);
    if (signal) process.kill(process.pid, signal);
    else process.exitCode = code ?? 1;
  });
}

/** In the child of relaunch: the parent gone means "stop", as SIGTERM does (a graceful stop). */
function followParent() {
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}
