/**
 * Emoji in request text: drawn in captions, never spoken. What counts is what UTS #51 presents as an emoji: a
 * character with emoji presentation by default (🚀), one asking for it with U+FE0F (❤️), or a recommended sequence
 * (flags, keycaps, skin tones, ZWJ families). Symbols shown as text by default (©, ❤ and ★ alone) stay text, as
 * before; U+FE0E asks for text.
 */

const RGI_EMOJI = new RegExp('^\\p{RGI_Emoji}$', 'v');
const EMOJI_PRESENTATION = /^\p{Emoji_Presentation}/u;
const PICTOGRAPH = /^\p{Extended_Pictographic}/u;
/** What any emoji holds at least one of: a quick test that a text has none. */
const EMOJI_PART = /[\p{Extended_Pictographic}\p{Regional_Indicator}\u20E3]/u;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Whether a grapheme cluster is presented as an emoji. */
export function isEmoji(cluster: string): boolean {
  if (!EMOJI_PART.test(cluster) || cluster.includes('\uFE0E')) return false;
  if (RGI_EMOJI.test(cluster) || EMOJI_PRESENTATION.test(cluster)) return true;
  return PICTOGRAPH.test(cluster) && cluster.includes('\uFE0F');
}

/** Whether a text holds an emoji. */
export function hasEmoji(text: string): boolean {
  if (!EMOJI_PART.test(text)) return false;
  for (const { segment } of graphemes.segment(text)) if (isEmoji(segment)) return true;
  return false;
}

/** The text with every emoji blanked, one space for one UTF-16 unit, so offsets into it are offsets into the text. */
export function silenceEmoji(text: string): string {
  if (!EMOJI_PART.test(text)) return text;
  let silenced = '';
  for (const { segment } of graphemes.segment(text)) silenced += isEmoji(segment) ? ' '.repeat(segment.length) : segment;
  return silenced;
}

/** Whether nothing of the text is spoken: it is blank once its emoji are. */
export function onlyEmoji(text: string): boolean {
  return !/\S/u.test(silenceEmoji(text));
}
