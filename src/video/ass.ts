import { captionFont, type CaptionFont, type FontFace } from './font.js';
import { NO_WORD, type CaptionPiece, type Captions } from './captions.js';
import { joinLine } from '../speech/captions.js';
import { CAPTION_COLOURS, STYLE_PRESETS, type CaptionLook } from './caption-style.js';
import type { CaptionBand } from './h264/band.js';
import { visualRuns } from './bidi.js';
import { forBt601Drawing } from './colour.js';

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
function drawnText(text: string, font: CaptionFont, { rightToLeft = false, size = 100 }: { rightToLeft?: boolean; size?: number } = {}): string {
  const { primary } = font;
  const select = (face: FontFace, weightChanges: boolean, scale: string) => `{\\fn${face.family}${weightChanges ? `\\b${face.bold ? 1 : 0}` : ''}${scale}}`;
  const runs = font.runs(text).map(({ text: run, face, scale }) => {
    const drawn = rightToLeft ? `${RIGHT_TO_LEFT_ISOLATE}${escapeAssText(run)}${POP_ISOLATE}` : escapeAssText(run);
    if (face === primary) return drawn;
    const weightChanges = face.bold !== primary.bold;
    // A fallback face at the size that gives it the primary's capital height (font.ts fallbackScale), then back.
    const [own, back] = scale === 100 ? ['', ''] : [sizeTags(Math.round((size * scale) / 100)), sizeTags(size)];
    return `${select(face, weightChanges, own)}${drawn}${select(primary, weightChanges, back)}`;
  });
  return (rightToLeft ? runs.reverse() : runs).join('');
}

/**
 * One line of a cue with the word `lit` in the highlight: as written when it runs left to right throughout;
 * otherwise in runs in visual order (bidi.ts), so the words stand where a reader of the line expects them, the lit
 * one in place, and punctuation on the side the line's direction puts it.
 */
function lineText(line: readonly CaptionPiece[], lit: number, font: CaptionFont, look: CaptionLook): string {
  const { litScale } = STYLE_PRESETS[look.style];
  const scale = (percent: number) => (litScale === 100 ? '' : sizeTags(percent));
  const highlighted = (drawn: string) => `{\\1c${assColour(look.highlightColour)}&${scale(litScale)}}${drawn}{\\1c${assColour(look.textColour)}&${scale(100)}}`;
  /** The piece's text drawn, lit or not (a lit word's fallback runs scale from the lit size). */
  const piece = (index: number, text: string, rightToLeft = false, prefix = '') =>
    line[index]?.word === lit ? highlighted(`${prefix}${drawnText(text, font, { rightToLeft, size: litScale })}`) : `${prefix}${drawnText(text, font, { rightToLeft })}`;
  const runs = visualRuns(line);
  if (!runs) return joinLine(line, (index) => piece(index, (line[index] as CaptionPiece).text));
  return runs.map((run, index) => piece(run.piece, run.text, run.rightToLeft, RUN_SPLITS[index % 2])).join('');
}

function dialogueText(lines: readonly CaptionPiece[][], lit: number, font: CaptionFont, look: CaptionLook): string {
  return lines.map((line) => lineText(line, lit, font, look)).join('\\N');
}

/**
 * A boxed cue (the subtitle style): one drawing of a box per line, the boxes stacked edge to edge at one height
 * (so no strip where two overlap, and one shape, so no seam), each as wide as its line measured plus the padding;
 * then each line centred in its box. libass's own boxes (border style 3) follow each glyph run's font, so spaces and
 * punctuation from another face than the script's stuck out as notches, and the boxes of two lines overlapped.
 */
function boxedEvents(times: string, lines: readonly CaptionPiece[][], font: CaptionFont, look: CaptionLook, box: Captions['box'], bottom: number): string[] {
  const pitch = box.fontSize + 2 * box.outline;
  const centre = Math.round(box.marginLeft + (box.width - box.marginLeft - box.marginRight) / 2);
  const top = (index: number) => bottom - (lines.length - index) * pitch;
  const shape = lines
    .map((line, index) => {
      const half = font.width(joinLine(line, (piece) => (line[piece] as CaptionPiece).text), box.fontSize) / 2 + box.outline;
      const [left, right, upper, lower] = [Math.round(centre - half), Math.round(centre + half), top(index), top(index) + pitch];
      return `m ${left} ${upper} l ${right} ${upper} ${right} ${lower} ${left} ${lower}`;
    })
    .join(' ');
  const fill = `\\1c${assColour(CAPTION_COLOURS.outline)}&\\1a&H${BOX_ALPHA.toString(16).toUpperCase()}&`;
  return [
    `Dialogue: 0,${times},Caption,,0,0,0,,{\\an7\\pos(0,0)\\bord0\\shad0${fill}\\p1}${shape}`,
    ...lines.map((line, index) => `Dialogue: 1,${times},Caption,,0,0,0,,{\\an5\\pos(${centre},${top(index) + pitch / 2})}${lineText(line, NO_WORD, font, look)}`),
  ];
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
  const marginBottom = box.marginBottom - (box.height - canvas.top - canvas.height);
  const style = [
    'Caption',
    font.primary.family,
    box.fontSize,
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
    1, // border style: outline + shadow (boxes are drawn: boxedEvents)
    boxed ? 0 : box.outline,
    0, // shadow
    2, // alignment: bottom centre
    box.marginLeft,
    box.marginRight,
    marginBottom,
    1,
  ].join(',');
  const events = captions.states.flatMap((state) => {
    const lines = captions.cues[state.cue]?.lines ?? [];
    const times = `${assTime(boundaryCentiseconds(state.startFrame, captions.fps))},${assTime(boundaryCentiseconds(state.endFrame, captions.fps))}`;
    if (boxed) return boxedEvents(times, lines, font, look, box, canvas.height - marginBottom);
    return [`Dialogue: 0,${times},Caption,,0,0,0,,${dialogueText(lines, state.word, font, look)}`];
  });
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
    '',
    '[Events]',
    'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
    ...events,
    '',
  ].join('\n');
}
