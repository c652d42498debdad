// SSML 1.1 (https://www.w3.org/TR/speech-synthesis11/) → a checked tree of the subset voxreel speaks, by saxes (a
// strict, maintained XML parser): never by regular expressions. No DOCTYPE is taken, so no entity is ever defined,
// let alone expanded (no "billion laughs", no external entity); the size, depth and element count are bounded
// before any of it is spoken.
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { AppError } from '../../errors.js';

export const SSML_NAMESPACE = 'http://www.w3.org/2001/10/synthesis';
const XML_NAMESPACE = 'http://www.w3.org/XML/1998/namespace';

/** Elements at most: a 5000-character text holds far fewer that mean something. */
export const MAX_ELEMENTS = 1000;
/** Nesting at most. */
export const MAX_DEPTH = 24;

/** Each element of the subset with the attributes it takes (`xml:lang` is written `lang`); any other is refused. */
const ELEMENTS: Record<string, readonly string[]> = {
  speak: ['version', 'lang', 'base', 'onlangfailure'],
  p: ['lang'],
  s: ['lang'],
  break: ['time', 'strength'],
  'say-as': ['interpret-as', 'format', 'detail'],
  sub: ['alias'],
  phoneme: ['alphabet', 'ph'],
  prosody: ['rate', 'volume', 'pitch', 'range', 'contour', 'duration'],
  emphasis: ['level'],
  lang: ['lang', 'onlangfailure'],
  mark: ['name'],
  // A voice by its id (GET /voices): a dialogue's turn (the `segments` of /tts and /tts-video are made into these).
  voice: ['name'],
};
/** Elements that hold no text. */
const EMPTY = new Set(['break', 'mark']);

export interface SsmlElement {
  kind: 'element';
  name: string;
  attributes: Record<string, string>;
  children: SsmlNode[];
  /** Where its start tag ends in the source, for messages. */
  line: number;
  column: number;
}

export type SsmlNode = SsmlElement | { kind: 'text'; text: string };

/** Whether a text asks to be read as SSML without saying so (`text_type` left out). */
export function looksLikeSsml(text: string): boolean {
  return /^\s*(?:<\?xml[^>]*\?>\s*)?<speak[\s>/]/u.test(text);
}

/** 400 INVALID_SSML at a place in the source. */
export function invalidSsml(line: number, column: number, problem: string, field = 'text'): AppError {
  return new AppError('INVALID_SSML', { field, message: `SSML, line ${line}, column ${column}: ${problem}` });
}

/** Parses and checks an SSML document; throws 400 INVALID_SSML naming the line, column and problem. */
export function parseSsml(source: string, field = 'text'): SsmlElement {
  const parser = new SaxesParser({ xmlns: true, position: true });
  const stack: SsmlElement[] = [];
  let root: SsmlElement | undefined;
  let elements = 0;
  const fail = (problem: string) => invalidSsml(parser.line, parser.column, problem, field);
  parser.on('doctype', () => {
    throw fail('a DOCTYPE is not accepted (SSML needs none, and entities are never defined or expanded)');
  });
  parser.on('processinginstruction', (instruction) => {
    if (instruction.target !== 'xml') throw fail(`the processing instruction <?${instruction.target}?> is not accepted`);
  });
  parser.on('opentag', (tag) => {
    elements += 1;
    if (elements > MAX_ELEMENTS) throw fail(`more than ${MAX_ELEMENTS} elements`);
    if (stack.length >= MAX_DEPTH) throw fail(`elements nested more than ${MAX_DEPTH} deep`);
    const element = checkedElement(tag as SaxesTagNS, stack.length === 0, fail);
    element.line = parser.line;
    element.column = parser.column;
    const parent = stack.at(-1);
    if (parent && EMPTY.has(parent.name)) throw fail(`<${parent.name}> holds nothing, not <${element.name}>`);
    if (parent) parent.children.push(element);
    else root = element;
    stack.push(element);
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  parser.on('text', (text) => {
    const parent = stack.at(-1);
    if (!parent) {
      if (text.trim()) throw fail('text outside <speak>');
      return;
    }
    if (EMPTY.has(parent.name) && text.trim()) throw fail(`<${parent.name}> holds no text`);
    parent.children.push({ kind: 'text', text });
  });
  parser.on('cdata', (text) => stack.at(-1)?.children.push({ kind: 'text', text }));
  try {
    parser.write(source).close();
  } catch (error) {
    if (error instanceof AppError) throw error;
    // saxes says "line:column: problem".
    const match = /^(\d+):(\d+): (.*)$/su.exec(error instanceof Error ? error.message : String(error));
    throw match ? invalidSsml(Number(match[1]), Number(match[2]), match[3] ?? 'malformed XML', field) : fail('malformed XML');
  }
  if (!root) throw invalidSsml(1, 1, 'no <speak> element', field);
  return root;
}

function checkedElement(tag: SaxesTagNS, isRoot: boolean, fail: (problem: string) => AppError): SsmlElement {
  const name = tag.local;
  if (tag.uri !== '' && tag.uri !== SSML_NAMESPACE) throw fail(`<${tag.name}> is in a namespace SSML does not define (${tag.uri})`);
  const allowed = ELEMENTS[name];
  if (!allowed) throw fail(`<${name}> is not an element voxreel speaks (docs/api.md, SSML, lists them)`);
  if (isRoot !== (name === 'speak')) throw fail(isRoot ? `the root element must be <speak>, not <${name}>` : '<speak> may only be the root element');
  const attributes: Record<string, string> = {};
  for (const attribute of Object.values(tag.attributes)) {
    if (attribute.prefix === 'xmlns' || attribute.name === 'xmlns') continue;
    const key = attribute.uri === XML_NAMESPACE ? attribute.local : attribute.uri === '' ? attribute.local : undefined;
    if (key === undefined) continue; // another vocabulary's attribute: not ours to read
    if (!allowed.includes(key)) throw fail(`<${name}> has no attribute ${attribute.name}`);
    attributes[key] = attribute.value;
  }
  return { kind: 'element', name, attributes, children: [], line: 0, column: 0 };
}
