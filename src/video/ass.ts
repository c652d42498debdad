import { captionFont, type CaptionFont, type FontFace } from './font.js';
import { NO_WORD, titlesOf, type CaptionPiece, type Captions, type CaptionTitle } from './captions.js';
import { joinLine } from '../speech/captions/cues.js';
import { CAPTION_COLOURS, shownText, STYLE_PRESETS } from './caption-style.js';
import type { CaptionBand } from './h264/index.js';
import { paragraphDirection, visualRuns } from './bidi.js';
import { baselines, blockHeight, emojiSquare, highlightPad, measureLine, softBlur, stateSizes, titleFit, titleLines, titleOutline, type Drawing, type Sizes } from './caption-geometry.js';
import { forBt601Drawing } from './colour.js';
import { layerDrawing, twemojiLayers } from './twemoji.js';

export { CAPTION_COLOURS } from './caption-style.js';

/** The subtitle style's box: black, a little over 60 % opaque. */
const BOX_ALPHA = 0x60;

/** RGB hex → ASS &HAABBGGRR (alpha 0 is opaque), as libass must get it for the pixels to come out BT.709 (colour.ts). */
function assColour(hex: string, alpha = 0): string {
  const rgb = forBt601Drawing(hex);
  return `&H${alpha.toString(16).padStart(2, '0')}${rgb.slice(4, 6)}${rgb.slice(2, 4)}${rgb.slice(0, 2)}`.toUpperCase();
}

const WORD_JOINER = '\u2060';

/**
 * User text → ASS dialogue text that libass draws literally. `{` would open an override block and `\N`, `\n`,
 * `\h`, `\{`, `\}` are escapes: a backslash followed by a word joiner (U+2060, zero width) is drawn as a plain
 * backslash, and libass draws `\{` and `\}` as the braces. Line breaks never reach here (layout makes lines).
 */
export function escapeAssText(text: string): string {
  return text
    .replace(/[\p{Cc}]/gu, '')
    .replace(/\\/g, `\\${WORD_JOINER}`)
    .replace(/[{}]/g, (brace) => `\\${brace}`);
}

/** ASS times are centiseconds; libass shows an event from its start (inclusive) to its end (exclusive). */
function assTime(centiseconds: number): string {
  const cs = centiseconds % 100;
  const seconds = Math.floor(centiseconds / 100);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${Math.floor(seconds / 3600)}:${pad(Math.floor(seconds / 60) % 60)}:${pad(seconds % 60)}.${pad(cs)}`;
}

/**
 * The ASS time for a frame boundary: ffmpeg hands libass the frame time truncated to whole milliseconds
 * (`pts * timebase * 1000`, which may come out a hair low), so we stay 1 ms under it; a frame lasts more
 * than the 10 ms grid, so the previous frame still falls before.
 */
export function boundaryCentiseconds(frame: number, fps: number): number {
  return frame === 0 ? 0 : Math.floor(((frame * 1000) / fps - 1) / 10);
}

/** Unicode's right-to-left isolate and its end: zero width, never looked up in a font. */
const RIGHT_TO_LEFT_ISOLATE = '\u2067';
const POP_ISOLATE = '\u2069';

/**
 * Two values of the secondary colour (unused without karaoke tags, so drawn as nothing), alternated between the
 * runs of a right-to-left line: each change starts a glyph run, so libass never merges two runs and reorders them.
 */
const RUN_SPLITS = ['{\\2c&H000001&}', '{\\2c&H000002&}'] as const;

/** Override tags that draw at `percent` % of the style's size. */
function sizeTags(percent: number): string {
  return `\\fscx${percent}\\fscy${percent}`;
}

/**
 * A piece of text with each run the style's font lacks in an explicit `\fn` of the fallback face that measured it,
 * so libass draws exactly what layout measured; family names come from our registry, never from the text. The weight
 * is asked for exactly too: libass takes the closest weight of a family among our fonts and fontconfig's, so a
 * regular DejaVu Sans of the system would beat our bold one under a style that is not bold. Right to left, the face
 * runs come last to first, each isolated right to left: libass lays every glyph run out by itself, left to right
 * among the others.
 */
function drawnText(text: string, font: CaptionFont, emoji: EmojiDrawer, { rightToLeft = false, size = 100 }: { rightToLeft?: boolean; size?: number } = {}): string {
  const { primary } = font;
  const select = (face: FontFace, weightChanges: boolean, scale: string) => `{\\fn${face.family}${weightChanges ? `\\b${face.bold ? 1 : 0}` : ''}${scale}}`;
  const runs = font.runs(text).map(({ text: run, face, scale, emoji: name }) => {
    if (name) return emoji(name);
    const drawn = rightToLeft ? rightToLeftRun(run) : escapeAssText(run);
    if (face === primary) return drawn;
    const weightChanges = face.bold !== primary.bold;
    // A fallback face at the size that gives it the primary's capital height (font.ts fallbackScale), then back.
    const [own, back] = scale === 100 ? ['', ''] : [sizeTags(Math.round((size * scale) / 100)), sizeTags(size)];
    return `${select(face, weightChanges, own)}${drawn}${select(primary, weightChanges, back)}`;
  });
  return (rightToLeft ? runs.reverse() : runs).join('');
}

/**
 * A run isolated right to left, with the spaces at its ends outside the isolate, in the order libass keeps them
 * (trailing on the left, leading on the right): inside, a space beside an emoji's drawing went to the wrong side.
 */
function rightToLeftRun(run: string): string {
  const [, lead = '', core = '', trail = ''] = /^(\s*)(.*?)(\s*)$/su.exec(run) ?? [];
  return `${escapeAssText(trail)}${core ? `${RIGHT_TO_LEFT_ISOLATE}${escapeAssText(core)}${POP_ISOLATE}` : ''}${escapeAssText(lead)}`;
}

/** Override tags that start and end the word being spoken, besides its size. */
interface LitTags {
  open: string;
  close: string;
}

/** The spoken word in the highlight colour; with a highlight box, in the text colour (the box is lit instead). */
function litTags(look: Captions['look']): LitTags {
  return look.highlightBox ? { open: '', close: '' } : { open: `\\1c${assColour(look.highlightColour)}&`, close: `\\1c${assColour(look.textColour)}&` };
}

/**
 * One line of a cue with the word `lit` in the highlight: as written when it runs left to right throughout in a
 * left-to-right paragraph; otherwise in runs in visual order (bidi.ts, with the paragraph's direction), so the words
 * stand where a reader of the line expects them, the lit one in place, and punctuation on the side the paragraph's
 * direction puts it. caption-geometry.ts lays out the same runs.
 */
function lineText(line: readonly CaptionPiece[], lit: number, font: CaptionFont, drawing: Drawing, emoji: EmojiDrawer, sizes: Sizes): string {
  const { look } = drawing;
  const litDrawn = litTags(look);
  const tags = (percent: number) => (sizes.lit === 100 && sizes.base === 100 ? '' : sizeTags(percent));
  const highlighted = (drawn: string) => `{${litDrawn.open}${tags(sizes.lit)}}${drawn}{${litDrawn.close}${tags(sizes.base)}}`;
  /** The piece's text drawn, lit or not (a lit word's fallback runs scale from the lit size). */
  const piece = (index: number, text: string, rightToLeft = false, prefix = '') => {
    const shown = shownText(text, look, drawing.language);
    return line[index]?.word === lit
      ? highlighted(`${prefix}${drawnText(shown, font, emoji, { rightToLeft, size: sizes.lit })}`)
      : `${prefix}${drawnText(shown, font, emoji, { rightToLeft, size: sizes.base })}`;
  };
  const runs = visualRuns(line, drawing.direction);
  if (!runs) return joinLine(line, (index) => piece(index, (line[index] as CaptionPiece).text));
  return runs.map((run, index) => piece(run.piece, run.text, run.rightToLeft, RUN_SPLITS[index % 2])).join('');
}

function dialogueText(lines: readonly CaptionPiece[][], lit: number, font: CaptionFont, drawing: Drawing, emoji: EmojiDrawer, sizes: Sizes): string {
  const start = sizes.base === 100 ? '' : `{${sizeTags(sizes.base)}}`;
  return start + lines.map((line) => lineText(line, lit, font, drawing, emoji, sizes)).join('\\N');
}

/** What every emoji or pictograph holds one of (keycaps their U+20E3): text without any has no picture to draw. */
const PICTURE_PART = /[\p{Extended_Pictographic}\p{Regional_Indicator}\u20E3]/u;

/** What stands where an emoji is in a line of an event: ASS drawing commands with their tags, by Twemoji name. */
type EmojiDrawer = (name: string) => string;

/** The \\p4 tags of an emoji's square (caption-geometry.ts emojiSquare). */
function squareTags(font: CaptionFont, fontSize: number): { side: number; square: string; inset: number } {
  const { side, below, inset } = emojiSquare(font, fontSize);
  return { side, square: `\\p4\\pbo${below}`, inset };
}

/** An invisible square where an emoji stands: what keeps every copy of a line laid out alike. */
function blankEmoji(font: CaptionFont, fontSize: number): EmojiDrawer {
  const { side, square, inset } = squareTags(font, fontSize);
  return () => `{${square}\\alpha&HFF&}${layerDrawing(undefined, side, inset)}{\\p0\\alpha&H00&\\4a&H80&}`;
}

/**
 * Emoji are Twemoji pictures drawn as ASS drawings, one shape (its own colour and opacity) a drawing, so libass places
 * them: the caption's event holds an invisible square where each emoji stands, as wide as layout measured it
 * (font.ts emojiEms), and each further event, one layer up, is the same text drawn invisible with the k-th shape
 * of each emoji in its square. libass lays the copies out alike, so the shapes stack where the squares are, in
 * every style (a lit word's emoji grows with it). The square sits a little below the baseline, as emoji do.
 */
function emojiEvents(font: CaptionFont, fontSize: number, lines: readonly CaptionPiece[][], event: (layer: number, prefix: string, emoji: EmojiDrawer) => string) {
  const { side, square, inset } = squareTags(font, fontSize);
  const pieces = lines.flat().filter((piece) => PICTURE_PART.test(piece.text));
  const names = new Set(pieces.flatMap((piece) => font.runs(piece.text).flatMap((run) => (run.emoji ? [run.emoji] : []))));
  const blank = blankEmoji(font, fontSize);
  const layers = Math.max(0, ...[...names].map((name) => twemojiLayers(name).length));
  const shape = (layer: number): EmojiDrawer => (name) => {
    const drawn = twemojiLayers(name)[layer];
    const fill = drawn ? `\\1c${assColour(drawn.colour)}&\\1a&H${Math.round(255 * (1 - drawn.opacity)).toString(16).padStart(2, '0').toUpperCase()}&` : '';
    return `{${square}${fill}}${layerDrawing(drawn, side, inset)}{\\p0\\alpha&HFF&}`;
  };
  return [event(0, '', blank), ...Array.from({ length: layers }, (_, layer) => event(layer + 1, '{\\alpha&HFF&\\bord0\\shad0}', shape(layer)))];
}

/**
 * A boxed cue (the subtitle style): one drawing of a box per line, the boxes stacked edge to edge at one height
 * (so no strip where two overlap, and one shape, so no seam), each as wide as its line measured plus the padding;
 * then each line centred in its box. libass's own boxes (border style 3) follow each glyph run's font, so spaces and
 * punctuation from another face than the script's stuck out as notches, and the boxes of two lines overlapped.
 */
function boxedEvents(times: string, lines: readonly CaptionPiece[][], font: CaptionFont, drawing: Drawing, box: Captions['box'], bottom: number, colour = ''): string[] {
  const { look, language } = drawing;
  const pitch = box.fontSize + 2 * box.outline;
  const centre = Math.round(box.marginLeft + (box.width - box.marginLeft - box.marginRight) / 2);
  const top = (index: number) => bottom - (lines.length - index) * pitch;
  const shape = lines
    .map((line, index) => {
      const half = font.width(shownText(joinLine(line, (piece) => (line[piece] as CaptionPiece).text), look, language), box.fontSize) / 2 + box.outline;
      const [left, right, upper, lower] = [Math.round(centre - half), Math.round(centre + half), top(index), top(index) + pitch];
      return `m ${left} ${upper} l ${right} ${upper} ${right} ${lower} ${left} ${lower}`;
    })
    .join(' ');
  const fill = `\\1c${assColour(CAPTION_COLOURS.outline)}&\\1a&H${BOX_ALPHA.toString(16).toUpperCase()}&`;
  return [
    `Dialogue: 0,${times},Caption,,0,0,0,,{\\an7\\pos(0,0)\\bord0\\shad0${fill}\\p1}${shape}`,
    ...lines.flatMap((line, index) =>
      emojiEvents(font, box.fontSize, [line], (layer, prefix, emoji) => {
        const text = lineText(line, NO_WORD, font, drawing, emoji, { base: 100, lit: 100 });
        return `Dialogue: ${layer + 1},${times},Caption,,0,0,0,,{\\an5\\pos(${centre},${top(index) + pitch / 2})}${prefix}${colour}${text}`;
      }),
    ),
  ];
}

/**
 * The highlight box of a caption state: one rectangle in the highlight colour around the spoken word on each line it
 * stands on, its emoji and punctuation included, as tall as the line and padded by the outline's width; placed where
 * libass draws the word (caption-geometry.ts), the lines laid out as the caption's event lays them out. libass's own
 * boxes (border style 3) boxed each glyph run: an emoji between two runs of a word split its box, and the alpha an
 * emoji's drawing restored lit every run after it (the next line, the words before the lit one).
 */
function highlightEvents(times: string, lines: readonly CaptionPiece[][], lit: number, font: CaptionFont, drawing: Drawing, sizes: Sizes, box: Captions['box'], bottom: number): string[] {
  const measured = lines.map((line) => measureLine(line, lit, font, drawing, sizes, box.fontSize));
  const tops = baselines(measured, bottom - blockHeight(measured));
  const centre = box.marginLeft + (box.width - box.marginLeft - box.marginRight) / 2;
  const pad = highlightPad(box);
  const shape = lines.flatMap((line, index) => {
    const metrics = measured[index] as (typeof measured)[number];
    const litPieces = line.flatMap((piece, at) => (piece.word === lit ? [metrics.pieces.get(at)] : [])).filter((extent) => extent !== undefined);
    if (litPieces.length === 0) return [];
    const start = centre - metrics.width / 2;
    const baseline = tops[index] as number;
    const [left, right] = [Math.round(start + Math.min(...litPieces.map((piece) => piece.left)) - pad), Math.round(start + Math.max(...litPieces.map((piece) => piece.right)) + pad)];
    const [upper, lower] = [Math.round(baseline - metrics.ascent - pad), Math.round(baseline + metrics.descent + pad)];
    return [`m ${left} ${upper} l ${right} ${upper} ${right} ${lower} ${left} ${lower}`];
  });
  if (shape.length === 0) return [];
  return [`Dialogue: 0,${times},Caption,,0,0,0,,{\\an7\\pos(0,0)\\bord0\\shad0\\1c${assColour(drawing.look.highlightColour)}&\\p1}${shape.join(' ')}`];
}

/**
 * The dialogue events of each caption state (one with the cue's lines and the current word lit; for a boxed style,
 * its boxes and then each line). The script draws on `canvas`,
 * a band of the frame (the whole frame by default), with the captions where they stand in the frame.
 */
export function assScript(captions: Captions, canvas: CaptionBand = { top: 0, height: captions.box.height }): string {
  const { box, look } = captions;
  const { box: boxed } = STYLE_PRESETS[look.style];
  const font = captionFont(look.family, captions.language);
  // A soft shadow: its edges blurred (libass blurs the outline and shadow, not the letters inside an outline). The
  // emoji's layers have no outline: there it would blur the picture itself.
  const blur = softBlur(box);
  const soft = blur > 0 ? `{\\blur${blur}}` : '';
  const marginBottom = box.marginBottom - (box.height - canvas.top - canvas.height);
  const style = styleLine('Caption', font, look, { fontSize: box.fontSize, outline: boxed ? 0 : box.outline, shadow: box.shadow }, box, marginBottom);
  const plain: Drawing = { look, language: captions.language, direction: paragraphDirection(captions.words.map((word) => word.text).join(' '), captions.language) };
  const highlightBox = look.highlightBox === true && STYLE_PRESETS[look.style].highlight;
  const events = captions.states.flatMap((state) => {
    const cue = captions.cues[state.cue];
    const lines = cue?.lines ?? [];
    // A dialogue's cue in its speaker's colours (speakers.ts).
    const speaker = cue?.speaker === undefined ? undefined : captions.speakers?.[cue.speaker];
    const drawing = speaker ? { ...plain, look: { ...look, textColour: speaker.textColour, highlightColour: speaker.highlightColour } } : plain;
    const colour = speaker && speaker.textColour !== look.textColour ? `{\\1c${assColour(speaker.textColour)}&}` : '';
    const times = `${assTime(boundaryCentiseconds(state.startFrame, captions.fps))},${assTime(boundaryCentiseconds(state.endFrame, captions.fps))}`;
    if (boxed) return boxedEvents(times, lines, font, drawing, box, canvas.height - marginBottom, colour);
    const sizes = stateSizes(captions, lines, state.grow, font);
    // With a highlight box, the box (one drawing around the spoken word on each line it is on) goes under the rest.
    const under = highlightBox ? highlightEvents(times, lines, state.word, font, drawing, sizes, box, canvas.height - marginBottom) : [];
    const layerOffset = under.length;
    return [
      ...under,
      ...emojiEvents(font, box.fontSize, lines, (layer, prefix, emoji) => `Dialogue: ${layer + layerOffset},${times},Caption,,0,0,0,,${prefix}${layer === 0 ? soft : ''}${colour}${dialogueText(lines, state.word, font, drawing, emoji, sizes)}`),
    ];
  });
  const titles = titlesOf(captions);
  const title = titles.flatMap((shown) => titleEvents(captions, shown, font, canvas));
  return [
    '[Script Info]',
    'ScriptType: v4.00+',
    `PlayResX: ${box.width}`,
    `PlayResY: ${canvas.height}`,
    // Lines are broken by measured width already; libass must not wrap again.
    'WrapStyle: 2',
    'ScaledBorderAndShadow: yes',
    'YCbCr Matrix: None',
    '',
    '[V4+ Styles]',
    'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding',
    `Style: ${style}`,
    ...(titles[0] ? [`Style: ${styleLine('Title', font, look, { fontSize: titles[0].fontSize, outline: titleOutline(titles[0]), shadow: box.shadow }, box, 0)}`] : []),
    '',
    '[Events]',
    'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
    ...title,
    ...events,
    '',
  ].join('\n');
}

/** An ASS style line: the caption font and colours at a size, with an outline and a shadow. */
function styleLine(
  name: string,
  font: CaptionFont,
  look: Captions['look'],
  drawn: { fontSize: number; outline: number; shadow: number },
  box: Captions['box'],
  marginBottom: number,
): string {
  return [
    name,
    font.primary.family,
    drawn.fontSize,
    assColour(look.textColour),
    assColour(look.textColour),
    assColour(CAPTION_COLOURS.outline),
    '&H80000000',
    font.primary.bold ? -1 : 0,
    0, // italic, underline, strike-out
    0,
    0,
    100, // scale x, y
    100,
    0, // spacing, angle
    0,
    1, // border style: outline + shadow (boxes are drawn: boxedEvents, highlightEvents)
    drawn.outline,
    drawn.shadow,
    2, // alignment: bottom centre
    box.marginLeft,
    box.marginRight,
    marginBottom,
    1,
  ].join(',');
}

/**
 * A title over its frames (the hook, a chapter's card): centred at the top of the safe area, in the captions' font
 * and case (with its emoji), right to left as its own text or the voice's language has it; at its own size and
 * outline where the style's (the first title's) differ.
 */
function titleEvents(captions: Captions, title: CaptionTitle, font: CaptionFont, canvas: CaptionBand): string[] {
  const { box, look } = captions;
  const times = `${assTime(boundaryCentiseconds(title.startFrame, captions.fps))},${assTime(boundaryCentiseconds(title.endFrame, captions.fps))}`;
  const [styled] = titlesOf(captions);
  const own = styled && styled.fontSize === title.fontSize ? '' : `\\fs${title.fontSize}\\bord${titleOutline(title)}`;
  const centre = Math.round(box.marginLeft + (box.width - box.marginLeft - box.marginRight) / 2);
  const lines = titleLines(title);
  const drawing: Drawing = { look, language: captions.language, direction: paragraphDirection(title.lines.join(' '), captions.language) };
  const fit = titleFit(title, font, drawing, box);
  const size = fit === 100 ? '' : sizeTags(fit);
  return emojiEvents(font, title.fontSize, lines, (layer, prefix, emoji) => {
    const text = lines.map((line) => lineText(line, NO_WORD, font, drawing, emoji, { base: fit, lit: fit })).join('\\N');
    return `Dialogue: ${layer + 10},${times},Title,,0,0,0,,{\\an8\\pos(${centre},${title.top - canvas.top})${own}${size}}${prefix}${text}`;
  });
}
