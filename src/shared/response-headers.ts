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

/*
 * The headers Node sends, and sends the same way. Names: Node's rule (node:http
 * `validateHeaderName`, lib/_http_common.js `tokenRegExp`). Values: Node's rule (`validateHeaderValue`:
 * tab, space to ~, 0x80 to 0xFF) without 0x80–0xFF, because Node puts those on the wire two ways: as
 * UTF-8 when the body is a string (the head is written with it in one UTF-8 string) and as Latin-1
 * when it is a Buffer (measured on Node 20: "café" went out as `63 61 66 c3 a9`, then `… e9`); RFC 9110
 * calls them obs-text, opaque to recipients, so a client could not read back the value the execution
 * recorded. Copied, not imported: this file is also the browser's (the UI's preview) and imports
 * nothing; test/engine/steps/response-headers.test.ts compares the rules with node:http's.
 *
 * Checked while the step runs, a header Node would refuse fails the step, so the caller's answer
 * (execution_failed) and the stored execution agree: thrown by `writeHead` after the execution was
 * stored as succeeded, it was a 500 internal_error the record did not explain.
 */
const HEADER_NAME = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
const BAD_VALUE_CHAR = /[^\t\x20-\x7e]/;

/** Why `value` cannot be sent as header `name`, or undefined when it can. */
export function headerValueProblem(name: string, value: string): string | undefined {
  const bad = BAD_VALUE_CHAR.exec(value);
  if (!bad) return undefined;
  const code = bad[0].codePointAt(0)!;
  const what =
    bad[0] === '\r' || bad[0] === '\n'
      ? 'a line break'
      : code < 0x20 || code === 0x7f
        ? 'a control character'
        : 'a character outside ASCII';
  const hex = code.toString(16).toUpperCase().padStart(4, '0');
  return (
    `The value of header "${name}" contains ${what} (U+${hex} at position ${bad.index}); header ` +
    'values are sent as ASCII text without control characters: encode other text with ' +
    '$encodeUrlComponent() or $base64encode().'
  );
}

/**
 * Names lowercased, values that are not strings as JSON, null and missing values and framing
 * headers left out. A name Node would refuse, or a value it would not send as it is (a line break
 * would even split the response): `refuse` is called with the header's name and what to say (and
 * must throw).
 */
export function responseHeaders(
  given: Record<string, unknown>,
  refuse: (name: string, message: string) => never,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined || value === null || RESERVED_RESPONSE_HEADERS.has(name.toLowerCase())) continue;
    // A saved workflow's names passed HeaderMap's pattern already; the UI's preview runs drafts.
    if (!HEADER_NAME.test(name)) refuse(name, `"${name}" is not a valid header name.`);
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    const problem = headerValueProblem(name, text);
    if (problem) refuse(name, problem);
    // Plain assignment: a "__proto__" header (refused when a workflow is saved) is not sent.
    headers[name.toLowerCase()] = text;
  }
  return headers;
}
