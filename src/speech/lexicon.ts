import { SaxesParser, type SaxesTagNS } from 'saxes';
import { AppError } from '../errors.js';

/**
 * W3C pronunciation lexicons (PLS 1.0, https://www.w3.org/TR/pronunciation-lexicon/): a document checked and read
 * into plain data (`parseLexicon`), and where a text's words have a pronunciation in a list of them
 * (`lexiconRewrites`). Pure: no I/O, nothing of HTTP; the store and the synthesizer call it.
 */

export const PLS_NAMESPACE = 'http://www.w3.org/2005/01/pronunciation-lexicon';
const XML_NAMESPACE = 'http://www.w3.org/XML/1998/namespace';

/** What one lexicon may hold (docs/api.md, Pronunciation lexicons). */
export const LEXICON_LIMITS = {
  /** UTF-8 bytes of the document. */
  bytes: 64 * 1024,
  lexemes: 1000,
  /** Characters (UTF-16 units) of one grapheme, its white space collapsed. */
  graphemeLength: 100,
  /** Characters of one phoneme or alias, its white space collapsed. */
  pronunciationLength: 200,
  /** Elements open at once: a lexicon needs 3 (lexicon, lexeme, grapheme); the rest is room for `metadata`. */
  depth: 8,
} as const;

/** One way to say a lexeme: words to speak in its place (`alias`), or IPA (`ipa`). */
export interface Pronunciation {
  kind: 'alias' | 'ipa';
  text: string;
  /** PLS `prefer="true"`: chosen over the others of the same grapheme. */
  prefer: boolean;
}

export interface Lexeme {
  /** Spellings, white space collapsed to single spaces; matched exactly (case-sensitive). */
  graphemes: string[];
  /** In document order. */
  pronunciations: Pronunciation[];
}

/** A checked PLS document as plain data (it can be stored as JSON or carried in a job). */
export interface Lexicon {
  /** `xml:lang` of the document, a BCP 47 tag. */
  language: string;
  /** The only alphabet accepted for phonemes. */
  alphabet: 'ipa';
  lexemes: Lexeme[];
}

/** A span of a text (UTF-16 offsets, `end` exclusive) to be spoken as `alias` (words) or `ipa` (phonemes) instead; exactly one is set. */
export interface Rewrite {
  start: number;
  end: number;
  alias?: string;
  ipa?: string;
}

/** Allowed attributes without a namespace, per element (`xml:*` ones and other namespaces' are let through). */
const ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  lexicon: ['version', 'alphabet'],
  meta: ['name', 'http-equiv', 'content'],
  metadata: [],
  lexeme: ['role'],
  grapheme: ['orthography'],
  phoneme: ['alphabet', 'prefer'],
  alias: ['prefer'],
  example: [],
};

/** What each element may contain. */
const CHILDREN: Readonly<Record<string, readonly string[]>> = {
  lexicon: ['meta', 'metadata', 'lexeme'],
  lexeme: ['grapheme', 'phoneme', 'alias', 'example'],
};

const LANGUAGE_TAG = /^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$/;

const collapse = (text: string) => text.trim().replace(/\s+/g, ' ');

/** INVALID_LEXICON (400) saying where the document goes wrong. */
function invalid(line: number, column: number, problem: string): AppError {
  return new AppError('INVALID_LEXICON', { message: `The lexicon is not valid PLS 1.0: line ${line}, column ${column}: ${problem}` });
}

interface Open {
  tag: SaxesTagNS;
  /** Inside `metadata`, where any XML goes. */
  free: boolean;
}

/**
 * Checks a PLS 1.0 document and reads it. Refused (INVALID_LEXICON, 400, naming the line and column): XML that is
 * not well-formed, any DOCTYPE (so no entity is ever declared or expanded), elements PLS does not define outside
 * `metadata`, nesting deeper than LEXICON_LIMITS.depth, and anything past the limits; a document over
 * LEXICON_LIMITS.bytes is PAYLOAD_TOO_LARGE (413) unread.
 */
export function parseLexicon(xml: string): Lexicon {
  if (Buffer.byteLength(xml, 'utf8') > LEXICON_LIMITS.bytes) {
    throw new AppError('PAYLOAD_TOO_LARGE', { message: `The lexicon is larger than the limit of ${LEXICON_LIMITS.bytes} bytes.` });
  }
  const parser = new SaxesParser({ xmlns: true, position: true });
  const fail = (problem: string) => invalid(parser.line, parser.column, problem);
  const stack: Open[] = [];
  let lexicon: Lexicon | undefined;
  let lexeme: Lexeme | undefined;
  let text: string | undefined;

  parser.on('doctype', () => {
    throw fail('a DOCTYPE is not accepted (no DTD, no entity declarations).');
  });
  parser.on('opentag', (tag) => {
    const parent = stack.at(-1);
    if (stack.length >= LEXICON_LIMITS.depth) throw fail(`<${tag.name}> is nested deeper than ${LEXICON_LIMITS.depth} elements.`);
    const free = parent !== undefined && (parent.free || parent.tag.local === 'metadata');
    stack.push({ tag, free });
    if (free) return;
    if (tag.uri !== PLS_NAMESPACE) {
      const where = parent ? `in <${parent.tag.name}>` : `as the root (expected <lexicon xmlns="${PLS_NAMESPACE}">)`;
      throw fail(`unknown element <${tag.name}>${tag.uri ? ` (namespace ${tag.uri})` : ''} ${where}.`);
    }
    if (!parent ? tag.local !== 'lexicon' : !CHILDREN[parent.tag.local]?.includes(tag.local)) {
      throw fail(parent ? `<${parent.tag.local}> may not contain <${tag.local}>.` : `the root must be <lexicon>, not <${tag.local}>.`);
    }
    checkAttributes(tag, fail);
    if (tag.local === 'lexicon') lexicon = readRoot(tag, fail);
    else if (tag.local === 'lexeme') {
      if (lexicon!.lexemes.length >= LEXICON_LIMITS.lexemes) throw fail(`more than ${LEXICON_LIMITS.lexemes} lexemes.`);
      lexeme = { graphemes: [], pronunciations: [] };
      lexicon!.lexemes.push(lexeme);
    } else if (parent?.tag.local === 'lexeme') {
      if (tag.local === 'grapheme' && lexeme!.pronunciations.length > 0) throw fail('<grapheme> must come before the <phoneme> and <alias> elements.');
      if (tag.local === 'phoneme' && (tag.attributes.alphabet?.value ?? 'ipa') !== 'ipa') throw fail('only the "ipa" alphabet is accepted.');
      text = '';
    }
  });
  const onText = (chunk: string) => {
    const open = stack.at(-1);
    if (text !== undefined) text += chunk;
    else if (open && !open.free && open.tag.local !== 'metadata' && chunk.trim() !== '') {
      throw fail(`text is not allowed directly in <${open.tag.local}>.`);
    }
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', (tag) => {
    const open = stack.pop();
    if (!open || open.free) return;
    if (tag.local === 'lexeme') {
      if (lexeme!.graphemes.length === 0) throw fail('<lexeme> has no <grapheme>.');
      if (lexeme!.pronunciations.length === 0) throw fail('<lexeme> has neither <phoneme> nor <alias>.');
      lexeme = undefined;
    } else if (text !== undefined) {
      const value = collapse(text);
      text = undefined;
      if (tag.local === 'example') return;
      const limit = tag.local === 'grapheme' ? LEXICON_LIMITS.graphemeLength : LEXICON_LIMITS.pronunciationLength;
      if (value === '') throw fail(`<${tag.local}> is empty.`);
      if (value.length > limit) throw fail(`<${tag.local}> is longer than ${limit} characters.`);
      if (tag.local === 'grapheme') lexeme!.graphemes.push(value);
      else lexeme!.pronunciations.push({ kind: tag.local === 'alias' ? 'alias' : 'ipa', text: value, prefer: tag.attributes.prefer?.value === 'true' });
    }
  });

  try {
    parser.write(xml).close();
  } catch (error) {
    if (error instanceof AppError) throw error;
    // saxes says `<line>:<column>: <what>` (a file name first when given one; none is).
    const [, line, column, problem] = /^(\d+):(\d+): (.*)$/s.exec(error instanceof Error ? error.message : '') ?? [];
    // Anything else is no parse error but a fault of ours: it stays what it is (a 500), not a 400 for the client.
    if (!line) throw error;
    throw invalid(Number(line), Number(column), problem ?? 'malformed XML.');
  }
  if (!lexicon) throw fail('there is no <lexicon> element.');
  return lexicon;
}

function checkAttributes(tag: SaxesTagNS, fail: (problem: string) => AppError): void {
  for (const attribute of Object.values(tag.attributes)) {
    if (attribute.uri === '' && !ATTRIBUTES[tag.local]?.includes(attribute.local)) {
      throw fail(`<${tag.local}> has no attribute "${attribute.name}".`);
    }
    if (attribute.local === 'prefer' && attribute.uri === '' && attribute.value !== 'true' && attribute.value !== 'false') {
      throw fail('prefer must be "true" or "false".');
    }
  }
}

function readRoot(tag: SaxesTagNS, fail: (problem: string) => AppError): Lexicon {
  const { version, alphabet } = tag.attributes;
  const language = Object.values(tag.attributes).find((attribute) => attribute.uri === XML_NAMESPACE && attribute.local === 'lang')?.value;
  if (version?.value !== '1.0') throw fail('<lexicon> needs version="1.0".');
  if (language === undefined) throw fail('<lexicon> needs xml:lang (the language of its words, e.g. "en-US").');
  if (!LANGUAGE_TAG.test(language)) throw fail(`xml:lang "${language.slice(0, 40)}" is not a language tag.`);
  if (alphabet?.value !== 'ipa') throw fail('<lexicon> needs alphabet="ipa": phonemes are accepted in IPA only.');
  return { language, alphabet: 'ipa', lexemes: [] };
}

/** Letters, digits and marks make words (and an apostrophe between them): a match has none of them just outside it. */
const WORD = /[\p{L}\p{N}\p{M}\p{Pc}]/u;
const APOSTROPHE = /['\u2019]/;
const SPACE = /\s/;

/** The code point that ends just before `index` (a whole surrogate pair), or '' at the start. */
function charBefore(text: string, index: number): string {
  if (index <= 0) return '';
  const low = text.charCodeAt(index - 1);
  return low >= 0xdc00 && low <= 0xdfff && index >= 2 ? text.slice(index - 2, index) : text.slice(index - 1, index);
}

function charAt(text: string, index: number): string {
  const code = text.codePointAt(index);
  return code === undefined ? '' : String.fromCodePoint(code);
}

/** Whether a word ends at `index`: a word character, or an apostrophe after one ("don" of "don't" is no word). */
function wordBefore(text: string, index: number): boolean {
  const before = charBefore(text, index);
  return WORD.test(before) || (APOSTROPHE.test(before) && WORD.test(charBefore(text, index - before.length)));
}

/** Whether a word starts at `index`: a word character, or an apostrophe before one. */
function wordAfter(text: string, index: number): boolean {
  const after = charAt(text, index);
  return WORD.test(after) || (APOSTROPHE.test(after) && WORD.test(charAt(text, index + after.length)));
}

interface TrieNode {
  next: Map<string, TrieNode>;
  pronunciation?: Pronunciation;
}

/**
 * The pronunciation of each grapheme, in a trie by UTF-16 unit (a space stands for any run of white space). Within
 * a lexicon, PLS's rule: every pronunciation of the grapheme, from every lexeme that has it, in document order; the
 * first with prefer="true", else the first. Across lexicons, the earliest that has the grapheme.
 */
function trieOf(lexicons: readonly Lexicon[]): TrieNode {
  const root: TrieNode = { next: new Map() };
  for (const lexicon of lexicons) {
    const choices = new Map<string, Pronunciation[]>();
    for (const lexeme of lexicon.lexemes) {
      for (const grapheme of lexeme.graphemes) choices.set(grapheme, [...(choices.get(grapheme) ?? []), ...lexeme.pronunciations]);
    }
    for (const [grapheme, pronunciations] of choices) {
      let node = root;
      for (let index = 0; index < grapheme.length; index += 1) {
        const unit = grapheme[index]!;
        node = node.next.get(unit) ?? node.next.set(unit, { next: new Map() }).get(unit)!;
      }
      node.pronunciation ??= pronunciations.find((pronunciation) => pronunciation.prefer) ?? pronunciations[0];
    }
  }
  return root;
}

/** The longest grapheme that starts at `start` and ends on a word boundary: its end and pronunciation. */
function longestAt(root: TrieNode, text: string, start: number): { end: number; pronunciation: Pronunciation } | undefined {
  let node: TrieNode | undefined = root;
  let found: { end: number; pronunciation: Pronunciation } | undefined;
  let index = start;
  while (node) {
    if (node.pronunciation && index > start && !wordAfter(text, index)) found = { end: index, pronunciation: node.pronunciation };
    if (index >= text.length) break;
    const unit = text[index]!;
    if (SPACE.test(unit)) {
      node = node.next.get(' ');
      while (index < text.length && SPACE.test(text[index]!)) index += 1;
    } else {
      node = node.next.get(unit);
      index += 1;
    }
  }
  return found;
}

/**
 * Where `text` has words the lexicons pronounce: non-overlapping spans in order, each a grapheme matched exactly
 * (case-sensitive; white space inside it matches any run of white space) on word boundaries, the longest at a
 * position first, then on from its end. Which pronunciation: see `trieOf`.
 */
export function lexiconRewrites(text: string, lexicons: readonly Lexicon[]): Rewrite[] {
  if (lexicons.length === 0) return [];
  const root = trieOf(lexicons);
  const rewrites: Rewrite[] = [];
  let index = 0;
  while (index < text.length) {
    const startsWord = !SPACE.test(text[index]!) && !wordBefore(text, index) && !isLowSurrogateOfPair(text, index);
    const match = startsWord ? longestAt(root, text, index) : undefined;
    if (!match) {
      index += 1;
      continue;
    }
    const { kind, text: said } = match.pronunciation;
    rewrites.push({ start: index, end: match.end, [kind]: said });
    index = match.end;
  }
  return rewrites;
}

function isLowSurrogateOfPair(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  const previous = text.charCodeAt(index - 1);
  return code >= 0xdc00 && code <= 0xdfff && previous >= 0xd800 && previous <= 0xdbff;
}
