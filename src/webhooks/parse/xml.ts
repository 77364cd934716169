/**
 * `application/xml`, `text/xml` and `+xml` bodies: scanned for depth and size, validated, then
 * parsed into an object as n8n does (SPEC 4).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { scanXml } from './scan.js';
import { decodeText } from './text.js';
import { invalid, type ParseLimits, type ParsedBody, reason, toPlain } from './types.js';

export function parseXmlBody(raw: Buffer, charset: string | undefined, limits: ParseLimits): ParsedBody {
  return { body: parseXml(decodeText(raw, charset), limits), files: [] };
}

function parseXml(text: string, limits: ParseLimits): unknown {
  const hint = 'Send well-formed XML, or the Content-Type that matches the body.';
  // Depth and size first: the validator keeps a stack of every open tag and puts it in its message.
  scanXml(text, limits);
  const check = XMLValidator.validate(text);
  if (check !== true) {
    const { msg, line, col } = check.err;
    throw invalid(`The body is not well-formed XML: ${reason(msg)} (line ${line}, column ${col}).`, hint);
  }
  let parsed: unknown;
  try {
    parsed = new XMLParser({
      // Attributes are kept next to child elements under an '@_' prefix (fast-xml-parser's default):
      // <order id="7"><item>x</item></order> -> { order: { '@_id': '7', item: 'x' } }; text beside
      // attributes or children goes under '#text'; repeated elements become arrays.
      ignoreAttributes: false,
      attributeNamePrefix: '@_',
      // Values stay strings, as in the query and form: "007" must not become 7.
      parseTagValue: false,
      parseAttributeValue: false,
      ignoreDeclaration: true,
      ignorePiTags: true,
      // Entities: the five XML ones and character references (&#233;) are decoded; DOCTYPE-declared
      // entities are bounded so a "billion laughs" body cannot blow up memory, and external (SYSTEM)
      // entities are refused by the parser.
      htmlEntities: true,
      processEntities: {
        enabled: true,
        maxEntityCount: 50,
        maxEntitySize: 1_000,
        maxTotalExpansions: 1_000,
        maxExpandedLength: 100_000,
      },
      // Stops deep documents early; toPlain applies the exact depth limit to the result.
      maxNestedTags: limits.maxDepth + 1,
    }).parse(text);
  } catch (err) {
    throw invalid(`The XML body could not be parsed: ${reason(err)}.`, hint, err);
  }
  return toPlain(parsed, limits.maxDepth);
}
