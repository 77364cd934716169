/** The V8 flags a serving `hookflow` process runs with (see node-flags.js). */
export declare const NODE_FLAGS: readonly string[];
