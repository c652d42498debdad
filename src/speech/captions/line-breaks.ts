/**
 * Where a caption line may end, by the rules of each script: between words (spaces in spaced scripts, the word
 * segmenter's words in the others; see word-segments.ts), unless UAX #14 or Japanese kinsoku forbids it there.
 * Words are whole already, so only the characters at a word's two ends matter here.
 */

/**
 * Characters no line starts with, even after a space: closing brackets (UAX #14 CL, CP; LB13), exclamation and
 * question marks (EX), infix separators (IS), non-starters (NS: small kana, the prolonged sound mark ー, iteration
 * marks, the middle dot, the wave dash), closing and sentence-final marks of Chinese and Japanese (kinsoku shori),
 * the ellipsis (IN), Thai's repetition and abbreviation marks, and postfix signs kept with their number (PO).
 * Quotes are left out: their direction differs by language ("Zitat“"), and the word segmenter keeps them with
 * their word in scripts without spaces (word-segments.ts), where UAX #14 forbids a break beside them.
 */
const NO_LINE_START =
  /^[\p{Pe}!?,.:;…‥‼⁇⁈⁉%‰℃°¢ーぁぃぅぇぉっゃゅょゎゕゖァィゥェォッャュョヮヵヶㇰ-ㇿ々〻ゝゞヽヾ゠〜・･。、，．！？：；ๆฯ]/u;

/** Characters no line ends with, even before a space: opening brackets (UAX #14 OP; LB14). */
const NO_LINE_END = /\p{Ps}$/u;

/** Whether a line may end between `before` and `after`, two neighbouring words. */
export function mayBreakBetween(before: string, after: string): boolean {
  return !NO_LINE_START.test(after) && !NO_LINE_END.test(before);
}

/**
 * A word that ends a sentence by its own marks. Only the full-width marks of Chinese and Japanese are trusted: a
 * full stop of a spaced script also ends abbreviations and numbers ("Dr.", "3.5"), and there the engine's own
 * sentences (sentences.ts, with its list of abbreviations) mark the starts.
 */
const SENTENCE_END = /[。！？．‼⁇⁈⁉][\p{Pe}\p{Pf}"'」』）】〕]*$/u;

export function endsSentence(word: string): boolean {
  return SENTENCE_END.test(word);
}

/** Whether grapheme cluster `segment` may begin a line (for a word cut into pieces where it does not fit). */
export function mayStartLine(segment: string): boolean {
  return !NO_LINE_START.test(segment);
}
