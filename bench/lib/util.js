/** Small helpers every part of the bench uses. */

export const MiB = 1024 * 1024;

export const log = (msg) => console.error(`bench: ${msg}`);

export const sum = (xs) => xs.reduce((a, b) => a + b, 0);
export const mean = (xs) => sum(xs) / xs.length;

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}
