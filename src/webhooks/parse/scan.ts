/**
 * Linear pre-scans that bound what the real parsers are asked to do with an untrusted body.
 * JSON.parse and fast-xml-parser have no depth or size options, and they pay for a
 * hostile body before anything can look at their result: 8 million nested `[` cost JSON.parse
 * ~800 MB and seconds; 16 MB of unclosed `<a>` made fast-xml-parser's validator hold a 5-million-entry
 * tag stack and return it, stringified, as a 45 MB error message. A scan over the text that counts
 * what the parser would build and stops at the first excess turns all of that into one pass
 * that ends at the offending character.
 *
 * Hand-written because no library in package.json does it: secure-json-parse and fast-xml-parser
 * offer no limits on depth or node count (fast-xml-parser's `maxNestedTags` applies to its parser, not
 * to its validator, and only after the tag stack is built).
 *
 * Each scan only has to agree with its parser on well-formed input: on malformed input the parser
 * stops at the first error, before anything the scan could have miscounted past it.
 */
import { AppError } from '../../errors.js';

/** What the scans count; see DEFAULT_PARSE_LIMITS in types.ts for the values and why. */
export interface StructureLimits {
  /** Nesting below the top-level value (a top-level object holding an object has depth 1). */
  maxDepth: number;
  /** JSON values: objects, arrays, strings, numbers, literals (counted as objects + arrays + commas). */
  maxJsonValues: number;
  /** JSON objects and arrays, the costly values (~100 bytes of heap each once parsed). */
  maxJsonContainers: number;
  /** XML elements plus their attributes. */
  maxXmlNodes: number;
}

const QUOTE = 0x22; // "
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b; // [
const CLOSE_BRACKET = 0x5d; // ]
const OPEN_BRACE = 0x7b; // {
const CLOSE_BRACE = 0x7d; // }
const COMMA = 0x2c;

const LT = 0x3c; // <
const GT = 0x3e; // >
const SLASH = 0x2f;
const BANG = 0x21; // !
const QUESTION = 0x3f; // ?
const EQUALS = 0x3d;
const APOSTROPHE = 0x27;

function tooMuch(message: string, hint: string): AppError {
  return new AppError('invalid_body', message, { hint });
}

const depthHint = 'Flatten the payload; deeply nested bodies are refused to protect the server.';
const sizeHint =
  'Split the payload into smaller requests, or send it as a file (e.g. application/octet-stream).';

/** Index of the quote that closes the JSON string whose content starts at `from` (text.length if none). */
function endOfJsonString(text: string, from: number): number {
  let i = from;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote === -1) return text.length;
    // Escaped when preceded by an odd run of backslashes. Runs are disjoint, so the scan stays linear.
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    i = quote + 1;
  }
}

/**
 * Throws invalid_body when the JSON text nests deeper than `maxDepth` or holds more values or
 * containers than allowed. Strings are skipped with indexOf; only structural characters count.
 */
export function scanJson(text: string, limits: StructureLimits): void {
  const { maxDepth, maxJsonValues, maxJsonContainers } = limits;
  const end = text.length;
  let open = 0;
  let containers = 0;
  let values = 1;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = endOfJsonString(text, i + 1);
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      // `open` containers hold the character: the first is the top-level value, at depth 0.
      if (++open > maxDepth + 1) {
        throw tooMuch(`The body is nested more than ${maxDepth} levels deep (at character ${i}).`, depthHint);
      }
      if (++containers > maxJsonContainers || ++values > maxJsonValues) {
        throw tooMuch(
          `The JSON body has more than ${maxJsonContainers} objects and arrays or ${maxJsonValues} values (at character ${i}).`,
          sizeHint,
        );
      }
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      open--;
    } else if (c === COMMA && ++values > maxJsonValues) {
      throw tooMuch(
        `The JSON body has more than ${maxJsonContainers} objects and arrays or ${maxJsonValues} values (at character ${i}).`,
        sizeHint,
      );
    }
  }
}

/** `text.indexOf(search, from)`, or text.length when absent: an unterminated construct runs to the end. */
function indexOrEnd(text: string, search: string, from: number): number {
  const at = text.indexOf(search, from);
  return at === -1 ? text.length : at;
}

/**
 * Throws invalid_body when XML elements nest deeper than `maxDepth` or elements plus attributes
 * exceed `maxXmlNodes`. Tokenizes as fast-xml-parser's validator does (it runs next, and its tag
 * stack is what a deep body blows up): `<?…?>`, `<!--…-->`, `<![CDATA[…]]>`, `<!DOCTYPE …>` with
 * its angle brackets balanced, other `<!` skipped; a tag ends at the first `>` outside a quoted
 * attribute value and closes itself when `/` precedes that `>`.
 */
export function scanXml(text: string, limits: StructureLimits): void {
  const { maxDepth, maxXmlNodes } = limits;
  const end = text.length;
  let open = 0;
  let nodes = 0;
  let i = 0;
  while (i < end) {
    const lt = text.indexOf('<', i);
    if (lt === -1) return;
    const next = text.charCodeAt(lt + 1);
    if (next === QUESTION) {
      i = indexOrEnd(text, '?>', lt + 2) + 2;
      continue;
    }
    if (next === BANG) {
      if (text.startsWith('--', lt + 2)) i = indexOrEnd(text, '-->', lt + 4) + 3;
      else if (text.startsWith('[CDATA[', lt + 2)) i = indexOrEnd(text, ']]>', lt + 9) + 3;
      else if (text.startsWith('DOCTYPE', lt + 2)) i = endOfDoctype(text, lt + 9) + 1;
      else i = lt + 2;
      continue;
    }
    // A start, end or empty-element tag: find its `>` outside quotes, counting attributes (`=`).
    let attributes = 0;
    let j = lt + 1;
    for (; j < end; j++) {
      const c = text.charCodeAt(j);
      if (c === GT) break;
      if (c === QUOTE || c === APOSTROPHE) j = indexOrEnd(text, c === QUOTE ? '"' : "'", j + 1);
      else if (c === EQUALS) attributes++;
    }
    if (next === SLASH) {
      open--;
    } else {
      if (text.charCodeAt(j - 1) !== SLASH && ++open > maxDepth + 1) {
        throw tooMuch(
          `The XML body is nested more than ${maxDepth} levels deep (at character ${lt}).`,
          depthHint,
        );
      }
      nodes += 1 + attributes;
      if (nodes > maxXmlNodes) {
        throw tooMuch(
          `The XML body has more than ${maxXmlNodes} elements and attributes (at character ${lt}).`,
          sizeHint,
        );
      }
    }
    i = j + 1;
  }
}

/** The validator ends `<!DOCTYPE` where its `<` and `>` balance, quotes or not; so does this. */
function endOfDoctype(text: string, from: number): number {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === LT) depth++;
    else if (c === GT && --depth === 0) return i;
  }
  return text.length;
}
