/**
 * The headers a `respond` step sends, shared with the UI's preview (web/src/lib/simulate.ts): no
 * imports, so the browser build can take it as it is.
 */

/** Framing headers belong to the server that sends the response, not to the workflow. */
export const RESERVED_RESPONSE_HEADERS = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'trailer',
  'te',
]);

/**
 * Names lowercased, values that are not strings as JSON, null and missing values and framing
 * headers left out. A line break in a value would split the response: `refuse` is called with the
 * header's name and what to say (and must throw).
 */
export function responseHeaders(
  given: Record<string, unknown>,
  refuse: (name: string, message: string) => never,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined || value === null || RESERVED_RESPONSE_HEADERS.has(name.toLowerCase())) continue;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (/[\r\n\0]/.test(text)) refuse(name, `The value of header "${name}" contains a line break.`);
    // Plain assignment: a "__proto__" header (refused when a workflow is saved) is not sent.
    headers[name.toLowerCase()] = text;
  }
  return headers;
}
