/**
 * Reading a central bank's XML document strictly: well-formed or refused (the parser alone is
 * forgiving about unclosed elements, so a truncated download would read as a shorter document),
 * every value kept as its text (a number parsed by the XML reader would lose trailing zeros and
 * exactness), untrimmed (a padded rate is refused rather than quietly cleaned up), namespace
 * prefixes dropped. https://github.com/NaturalIntelligence/fast-xml-parser (v5 options).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { FeedError } from '../core/errors.js';

/** An element as read: attributes under `@_name`, text under `#text`, children by name. */
export type XmlNode = Record<string, unknown>;

export const isXmlNode = (value: unknown): value is XmlNode => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The document's root object; `repeated` names the elements always read as lists (a day's rates),
 * even when the document holds one. An empty, malformed or non-XML body is a FeedError.
 */
export function readBankXml(text: string, feed: string, repeated: readonly string[]): XmlNode {
  // A byte-order mark or whitespace before the declaration says nothing about the data.
  const body = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).trimStart();
  if (body === '') throw new FeedError(`${feed}: the body is empty`);
  const valid = XMLValidator.validate(body);
  if (valid !== true) {
    const { msg, line, col } = valid.err;
    throw new FeedError(`${feed}: the XML is not well-formed (line ${line}, column ${col}): ${msg}`);
  }
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    parseAttributeValue: false,
    parseTagValue: false,
    trimValues: false,
    removeNSPrefix: true,
    isArray: (tagName, _path, _isLeaf, isAttribute) => !isAttribute && repeated.includes(tagName),
  });
  try {
    return parser.parse(body) as XmlNode;
  } catch (error) {
    throw new FeedError(`${feed}: the XML could not be parsed: ${(error as Error).message}`, { cause: error });
  }
}
