/** What every reader of the English normalizer shares: its shape, the number pattern, and a look at the words around. */

/** A span of the source text and the words an engine should say for it. */
export interface Reading {
  readonly spoken: string;
  /** UTF-16 units of the source read, from the match's start; the whole match when absent. */
  readonly length?: number;
}

export interface Reader {
  /** Sticky (`y`), tried where a word or a sign starts. */
  readonly pattern: RegExp;
  /** The reading of a match, or undefined to leave the span to the next reader. */
  read(match: RegExpExecArray, source: string): Reading | undefined;
}

/** Whole digits, with or without thousands separators. */
export const WHOLE = String.raw`(?:\d{1,3}(?:,\d{3})+|\d+)`;
/** A written number: optional sign, whole digits, optional decimals. */
export const NUMBER = String.raw`(?<![\p{L}\p{N}])[-−+]?${WHOLE}(?:\.\d+)?`;
/** Nothing of a word or a number follows (a number goes on past ".5"). */
export const WORD_END = String.raw`(?![\p{L}\p{N}]|\.\d)`;

export function sticky(source: string): RegExp {
  return new RegExp(source, 'uy');
}

const WORD_BEFORE = /([\p{L}\p{N}'’]+)[ \t]+$/u;
const WORD_AFTER = /^[ \t]+([\p{L}\p{N}'’]+)/u;
const LOOK = 40;

export interface Word {
  readonly text: string;
  readonly index: number;
}

/** The word just before `index`, with nothing but spaces between. */
export function wordBefore(source: string, index: number): Word | undefined {
  const window = source.slice(Math.max(0, index - LOOK), index);
  const found = WORD_BEFORE.exec(window);
  return found ? { text: found[1]!, index: index - window.length + found.index } : undefined;
}

/** The word just after `index`, with nothing but spaces between. */
export function wordAfter(source: string, index: number): string | undefined {
  return WORD_AFTER.exec(source.slice(index, index + LOOK))?.[1];
}

/** Whether nothing but spaces follows `index` up to the line's or the text's end. */
function lineEnds(source: string, index: number): boolean {
  const rest = source.slice(index, index + LOOK);
  const spaces = /^[ \t]*/.exec(rest)![0].length;
  return spaces === rest.length ? index + spaces >= source.length : rest[spaces] === '\n' || rest[spaces] === '\r';
}

/** Whether a sentence could end at `index`: the line ends, or a capital starts the next word. */
function sentenceMayEnd(source: string, index: number): boolean {
  return lineEnds(source, index) || /^\s+["“‘(]?\p{Lu}/u.test(source.slice(index, index + 4));
}

export function capitalized(word: string | undefined): boolean {
  return word !== undefined && /^\p{Lu}/u.test(word);
}

/** Whether `index` starts a sentence: nothing but spaces since the text's start or a sentence mark. */
function startsSentence(source: string, index: number): boolean {
  let before = index - 1;
  while (before >= 0 && /\s/.test(source[before]!)) before -= 1;
  return before < 0 || /[.!?:]/.test(source[before]!);
}

/** Whether a word is capitalized and not a sentence's first, as names within a sentence are. */
export function isNameWithin(source: string, word: Word | undefined): boolean {
  return word !== undefined && capitalized(word.text) && !startsSentence(source, word.index);
}

/**
 * The reading of a match that ends in a dot, leaving the dot to the sentence where one may end there ("etc.", "p.m.");
 * a title ("Dr.", "Mr.") keeps it only at a line's end.
 */
export function readingWithPeriod(spoken: string, match: RegExpExecArray, source: string, mayEndSentence: boolean): Reading {
  const [written] = match;
  const end = match.index + written.length;
  const keepsPeriod = written.endsWith('.') && (mayEndSentence ? sentenceMayEnd(source, end) : lineEnds(source, end));
  return { spoken, length: written.length - (keepsPeriod ? 1 : 0) };
}

