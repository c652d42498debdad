import { onlyEmoji } from '../engines/emoji-text.js';
import { balancedText, joinLine, type CaptionPiece, type CaptionText } from '../speech/captions/groups.js';
import { textTokens } from '../speech/word-segments.js';
import { shownText, STYLE_PRESETS, type CaptionLook } from './caption-style.js';
import type { CaptionTitle } from './captions.js';
import type { MeasuredFont } from './font.js';
import type { CaptionBox } from './frame.js';

/** Lines a title takes at most. */
export const TITLE_LINES = 3;
/** A hook is the largest text on screen: at least this many times the captions' lit word. */
const OVER_CAPTIONS = 1.1;
/** A hook, not a poster: at most the larger of its least size and this share of the frame's shorter side. */
const LARGEST_SHARE = 0.1;
/** The title's outline on each side, times its size (ass.ts draws it at a twelfth). */
const OUTLINE = 1 / 12;
/** Room kept between the title's last line and the captions below it, times the captions' size. */
const GAP = 0.5;
/** Width kept spare for small differences between our measure and libass (as frame.ts keeps for caption lines). */
const SPARE = 0.96;

/** The title's words: the text's words, an emoji on its own joined to the word before it (at the start, to the word after). */
function titleWords(text: string): CaptionText[] {
  const words: CaptionText[] = [];
  let leading = '';
  for (const token of textTokens(text)) {
    const last = words.at(-1);
    if (onlyEmoji(token.text) && last && !token.breakBefore) last.text += `${token.spaceBefore ? ' ' : ''}${token.text}`;
    else if (onlyEmoji(token.text) && !last) leading += `${token.text} `;
    else {
      words.push({ text: leading + token.text, start: 0, end: 0, sentenceStart: words.length === 0, breakBefore: token.breakBefore, spaceBefore: token.spaceBefore });
      leading = '';
    }
  }
  if (leading) words.push({ text: leading.trim(), start: 0, end: 0, sentenceStart: true, breakBefore: false, spaceBefore: true });
  return words;
}

/** A title laid out: its lines and size, and whether it is the largest text on screen (a hook) at that size. */
export interface TitleLayout {
  title: CaptionTitle;
  hook: boolean;
}

/**
 * A title sized as a hook: in as few lines as make it at least OVER_CAPTIONS times the captions' lit word (three at
 * most), the lines balanced (broken only where caption lines may break, an emoji with its word), then as large as
 * those lines allow up to the larger of that size and LARGEST_SHARE of the frame; above the captions when they are in
 * the middle or at the bottom. A title too long for that in three lines is drawn as large as three lines allow, and is
 * then no hook.
 */
export function layoutTitle(title: { text: string; startFrame?: number; endFrame: number }, box: CaptionBox, font: MeasuredFont, look: CaptionLook, language?: string): TitleLayout {
  const words = titleWords(title.text);
  // Widths at a size of 1: every width grows in proportion to the size.
  const width = (line: string) => font.width(shownText(line, look, language), 100) / 100;
  const room = (box.width - box.marginLeft - box.marginRight) * SPARE;
  const captionsTop = box.height - box.marginBottom - box.textHeight;
  const height = look.position === 'top' ? Infinity : captionsTop - box.fontSize * GAP - box.marginTop;
  const least = Math.ceil((box.fontSize * STYLE_PRESETS[look.style].litScale * OVER_CAPTIONS) / 100);
  const largest = Math.max(least, Math.round(Math.min(box.width, box.height) * LARGEST_SHARE));
  // A title's own line breaks may ask for more lines.
  const most = Math.max(TITLE_LINES, 1 + words.filter((word, index) => index > 0 && word.breakBefore).length);
  const layouts = Array.from({ length: most }, (_, index) => {
    const lines = balancedText(words, index + 1, width, language);
    if (!lines) return undefined;
    const text = lines.map((line) => joinLine(line, (piece) => (line[piece] as CaptionPiece).text));
    const widest = Math.max(...text.map(width));
    return { lines: text, size: Math.floor(Math.min(room / (widest + 2 * OUTLINE), height / (lines.length + 2 * OUTLINE))) };
  }).filter((layout) => layout !== undefined);
  const hook = layouts.find((layout) => layout.size >= least && layout.lines.length <= TITLE_LINES);
  const chosen = hook ?? layouts.reduce((best, layout) => (layout.size > best.size ? layout : best));
  return {
    title: { lines: chosen.lines, startFrame: title.startFrame ?? 0, endFrame: title.endFrame, top: box.marginTop, fontSize: Math.max(1, Math.min(largest, chosen.size)), fit: 100 },
    hook: hook !== undefined,
  };
}
