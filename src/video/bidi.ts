import { createRequire } from 'node:module';
import type { Bidi } from 'bidi-js';
import { joinLine } from '../speech/captions/cues.js';

// A CommonJS module whose export is the factory (its types declare it as the default export).
const bidiFactory = createRequire(import.meta.url)('bidi-js') as () => Bidi;
const bidi = bidiFactory();

/** The direction of a paragraph: where its lines start, and where neutral characters at a run's edge go. */
export type Direction = 'ltr' | 'rtl';

/** Languages (BCP 47 primary subtags) written right to left. */
const RIGHT_TO_LEFT_LANGUAGES = new Set(['ar', 'arc', 'ckb', 'dv', 'fa', 'he', 'iw', 'ps', 'sd', 'syr', 'ug', 'ur', 'yi']);

/** A right-to-left letter: Unicode's bidi classes R and AL. */
function rightToLeftLetter(character: string): boolean {
  const type = bidi.getBidiCharTypeName(character);
  return type === 'R' || type === 'AL';
}

/**
 * The direction of a paragraph, decided once for all of its lines, groups and cues (UAX #9 P2-P3 on the whole
 * text, not on a line): right to left where the voice's language is written so and the text holds a right-to-left
 * letter (a Hebrew text may well start with "TikTok"); otherwise its first strong character's; left to right
 * without one.
 */
export function paragraphDirection(text: string, language?: string): Direction {
  const primary = language?.toLowerCase().split(/[-_]/)[0] ?? '';
  if (RIGHT_TO_LEFT_LANGUAGES.has(primary) && [...text].some(rightToLeftLetter)) return 'rtl';
  for (const character of text) {
    const type = bidi.getBidiCharTypeName(character);
    if (type === 'L') return 'ltr';
    if (type === 'R' || type === 'AL') return 'rtl';
  }
  return 'ltr';
}

/** A stretch of a caption line in one direction within one piece (`piece` -1: a space between two pieces). */
export interface VisualRun {
  piece: number;
  /** The characters in their logical order: the renderer lays out a right-to-left run itself. */
  text: string;
  rightToLeft: boolean;
}

/**
 * A caption line (its pieces, with a space before those that have one: speech/captions/cues.ts joinLine) cut into runs in
 * the order they stand from left to right, by the Unicode bidirectional algorithm with the paragraph's direction
 * (paragraphDirection: never the line's own first word); undefined for a line that is left to right throughout in a
 * left-to-right paragraph (drawn as written). libass orders the characters of each glyph run by itself but lays the
 * runs out left to right in the order it gets them, and every colour change starts a run: so a line with a
 * right-to-left part must come to it run by run, in visual order.
 */
export function visualRuns(pieces: ReadonlyArray<{ text: string; spaceBefore?: boolean }>, direction: Direction = 'ltr'): VisualRun[] | undefined {
  const text = joinLine(pieces, (index) => (pieces[index] as { text: string }).text);
  const embedding = bidi.getEmbeddingLevels(text, direction);
  if (embedding.levels.every((level) => level === 0)) return undefined;
  const owner = new Int32Array(text.length).fill(-1);
  let offset = 0;
  pieces.forEach((piece, index) => {
    if (index > 0 && piece.spaceBefore !== false) offset += 1;
    owner.fill(index, offset, offset + piece.text.length);
    offset += piece.text.length;
  });
  const runs: Array<{ piece: number; rightToLeft: boolean; from: number; to: number; last: number }> = [];
  for (const index of bidi.getReorderedIndices(text, embedding)) {
    const piece = owner[index] as number;
    const rightToLeft = ((embedding.levels[index] as number) & 1) === 1;
    const run = runs.at(-1);
    // One run while the piece and direction stay and the characters follow each other in that direction.
    if (run && run.piece === piece && run.rightToLeft === rightToLeft && index === run.last + (rightToLeft ? -1 : 1)) {
      run.from = Math.min(run.from, index);
      run.to = Math.max(run.to, index);
      run.last = index;
    } else {
      runs.push({ piece, rightToLeft, from: index, to: index, last: index });
    }
  }
  return runs.map(({ piece, rightToLeft, from, to }) => ({ piece, rightToLeft, text: text.slice(from, to + 1) }));
}
