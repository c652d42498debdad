import { joinLine, type CaptionPiece } from '../speech/captions/cues.js';
import { shownText, STYLE_PRESETS } from './caption-style.js';
import { titlesOf, type Captions, type CaptionTitle } from './captions.js';
import { paragraphDirection, visualRuns, type Direction } from './bidi.js';
import type { CaptionFont, FontRun } from './font.js';

/**
 * Where libass puts what ass.ts writes, worked out from the same runs (font.ts runs, bidi.ts visualRuns) and the
 * fonts' own metrics, the way libass 0.17 lays an event out (ass_render.c): each run's advance as shaped, lines
 * centred between the margins by their advances (align_lines), each line as tall as the highest ascender and the
 * lowest descender among its glyphs at their \fscy (measure_text), a bottom-aligned event's last line resting on the
 * bottom margin. The highlight box is drawn from it, and the spliced path's caption band is sized from the glyphs'
 * ink it gives (shaped outlines, marks above the line included).
 */

/** How big a cue's text is drawn, in % of the style's font size: `base` for its words, `lit` for the one being spoken. */
export interface Sizes {
  base: number;
  lit: number;
}

/** What a line is drawn with besides its pieces: the look (case), the voice's language, the paragraph's direction. */
export interface Drawing extends Pick<Captions, 'look' | 'language'> {
  direction: Direction;
}

/** The square an emoji is drawn in, as wide as layout measured it (font.ts emojiEms), in drawing units of 1/8 pixel (\p4), a little below the baseline. */
export function emojiSquare(font: CaptionFont, fontSize: number): { side: number; below: number; inset: number } {
  const side = Math.round(font.emojiEms * fontSize * 8);
  return { side, below: Math.round(side * 0.12), inset: Math.round(side * 0.06) };
}

/** A line's extent around its baseline, and each piece's from the line's left edge, in pixels. */
export interface LineMetrics {
  width: number;
  ascent: number;
  descent: number;
  /** Ink above the baseline (up is positive) and below it (negative), outlines not counted. */
  inkTop: number;
  inkBottom: number;
  pieces: Map<number, { left: number; right: number }>;
}

/**
 * The stretches of a line as ass.ts writes them, in visual order, each of one piece (-1: the space between two) at one
 * size: the runs of visualRuns where there are any, else the pieces as written with a space before those that have one.
 */
export function lineSegments(line: readonly CaptionPiece[], lit: number, drawing: Drawing, sizes: Sizes): Array<{ piece: number; text: string; size: number }> {
  const size = (piece: number) => (line[piece]?.word === lit ? sizes.lit : sizes.base);
  const runs = visualRuns(line, drawing.direction);
  if (runs) return runs.map((run) => ({ piece: run.piece, text: run.text, size: size(run.piece) }));
  return line.flatMap((piece, index) => [
    ...(index > 0 && piece.spaceBefore !== false ? [{ piece: -1, text: ' ', size: sizes.base }] : []),
    { piece: index, text: piece.text, size: size(index) },
  ]);
}

/** A run's metrics in pixels, drawn at `size` % of `fontSize`: a fallback face at its own scale of that, rounded as ass.ts writes \fscx. */
function runMetrics(run: FontRun, font: CaptionFont, fontSize: number, size: number) {
  if (run.emoji) {
    const { side, below } = emojiSquare(font, fontSize);
    // A drawing's ascent is its height less \pbo, its descent \pbo (ass_render.c get_outline_glyph).
    const [width, ascent, descent] = [side / 8, (side - below) / 8, below / 8].map((pixels) => (pixels * size) / 100) as [number, number, number];
    return { width, ascent, descent, inkTop: ascent, inkBottom: -descent };
  }
  const scaled = run.face !== font.primary && run.scale !== 100;
  const factor = (fontSize * (scaled ? Math.round((size * run.scale) / 100) : size)) / 100;
  const ems = font.metrics({ ...run, scale: 100 });
  return { width: ems.width * factor, ascent: ems.ascent * factor, descent: ems.descent * factor, inkTop: ems.inkTop * factor, inkBottom: ems.inkBottom * factor };
}

/** A line laid out as libass lays it out (see the file comment), `lit` being the word drawn at `sizes.lit`. */
export function measureLine(line: readonly CaptionPiece[], lit: number, font: CaptionFont, drawing: Drawing, sizes: Sizes, fontSize: number): LineMetrics {
  const metrics: LineMetrics = { width: 0, ascent: 0, descent: 0, inkTop: -Infinity, inkBottom: Infinity, pieces: new Map() };
  for (const segment of lineSegments(line, lit, drawing, sizes)) {
    const left = metrics.width;
    for (const run of font.runs(shownText(segment.text, drawing.look, drawing.language))) {
      const measured = runMetrics(run, font, fontSize, segment.size);
      metrics.width += measured.width;
      metrics.ascent = Math.max(metrics.ascent, measured.ascent);
      metrics.descent = Math.max(metrics.descent, measured.descent);
      metrics.inkTop = Math.max(metrics.inkTop, measured.inkTop);
      metrics.inkBottom = Math.min(metrics.inkBottom, measured.inkBottom);
    }
    if (segment.piece < 0) continue;
    const known = metrics.pieces.get(segment.piece);
    metrics.pieces.set(segment.piece, { left: Math.min(known?.left ?? left, left), right: Math.max(known?.right ?? metrics.width, metrics.width) });
  }
  if (!Number.isFinite(metrics.inkTop)) [metrics.inkTop, metrics.inkBottom] = [0, 0];
  return metrics;
}

/** The baselines of lines stacked as libass stacks them, the first line's top at `top`. */
export function baselines(lines: readonly LineMetrics[], top: number): number[] {
  let y = top;
  return lines.map((line, index) => {
    y += (index === 0 ? 0 : (lines[index - 1] as LineMetrics).descent) + line.ascent;
    return y;
  });
}

/** The height of lines stacked: every line's ascent and descent. */
export function blockHeight(lines: readonly LineMetrics[]): number {
  return lines.reduce((sum, line) => sum + line.ascent + line.descent, 0);
}

/** Rows from `top` to `bottom` (exclusive of nothing: both are where ink may reach). */
export interface Extent {
  top: number;
  bottom: number;
}

/** The union of extents; undefined for none. */
export function unionOf(extents: ReadonlyArray<Extent | undefined>): Extent | undefined {
  return extents.reduce<Extent | undefined>((union, extent) => (!extent ? union : !union ? extent : { top: Math.min(union.top, extent.top), bottom: Math.max(union.bottom, extent.bottom) }), undefined);
}

/**
 * The sizes of a caption state: the lit word at the style's lit size (while it pops, the share of it it has grown
 * to), and the whole cue shrunk to fit between the margins where a word is wider than they leave (a long word alone
 * in a big style).
 */
export function stateSizes(captions: Pick<Captions, 'box' | 'look' | 'language'>, lines: readonly CaptionPiece[][], grow: number | undefined, font: CaptionFont): Sizes {
  const { box, look } = captions;
  const { litScale } = STYLE_PRESETS[look.style];
  const widest = Math.max(0, ...lines.map((line) => font.width(shownText(joinLine(line, (index) => (line[index] as CaptionPiece).text), look, captions.language), box.fontSize)));
  const room = box.width - box.marginLeft - box.marginRight - 2 * box.outline;
  const fit = widest * (litScale / 100) > room ? Math.floor((100 * room) / (widest * (litScale / 100))) : 100;
  return { base: fit, lit: Math.round((fit * litScale * (grow ?? 100)) / 10_000) };
}

/** The \blur of a soft shadow (libass blurs the outline and shadow, not the letters inside an outline); 0 without a shadow. */
export function softBlur(box: Captions['box']): number {
  return box.shadow > 0 ? Math.max(1, Math.round(box.shadow / 3)) : 0;
}

/** The highlight box's padding around the spoken word: the outline's width. */
export function highlightPad(box: Captions['box']): number {
  return Math.max(2, box.outline);
}

export function titleOutline(title: CaptionTitle): number {
  return Math.max(2, Math.round(title.fontSize / 12));
}

/**
 * The size a title is drawn at, % of its font size: layout's fit, less where its widest line as shaped here (an Arabic
 * line right to left) with its outline on both sides is wider than the safe area leaves: an Arabic title reached 85.9 %
 * of a TikTok frame's width, past its 85 % line.
 */
export function titleFit(title: CaptionTitle, font: CaptionFont, drawing: Drawing, box: Captions['box']): number {
  const room = box.width - box.marginLeft - box.marginRight - 2 * titleOutline(title);
  const widest = Math.max(1, ...titleLines(title).map((line) => measureLine(line, NO_LIT, font, drawing, { base: 100, lit: 100 }, title.fontSize).width));
  return Math.min(title.fit, Math.floor((100 * room) / widest));
}

/** A title's lines as caption lines: its words, none of them lit. */
export function titleLines(title: CaptionTitle): CaptionPiece[][] {
  return title.lines.map((line) => line.split(' ').map((text, index) => ({ text, word: index, spaceBefore: index > 0 })));
}

/** What of the captions decides what their script draws. */
export type DrawnCaptions = Pick<Captions, 'box' | 'look' | 'language' | 'words' | 'cues' | 'states' | 'title' | 'cards'>;

/** Rows of each line of a cue drawn bottom-aligned on `bottom`, with the lines' metrics and baselines. */
function stacked(lines: readonly LineMetrics[], top: number): Array<{ metrics: LineMetrics; baseline: number }> {
  const at = baselines(lines, top);
  return lines.map((metrics, index) => ({ metrics, baseline: at[index] as number }));
}

/** The rows a line's ink reaches, its outline and blur around it, its shadow below. */
function inkRows({ metrics, baseline }: { metrics: LineMetrics; baseline: number }, around: number, below: number): Extent {
  return { top: baseline - metrics.inkTop - around, bottom: baseline - metrics.inkBottom + around + below };
}

/**
 * The rows of the frame the captions' script draws on over the whole video, in frame pixels: every caption state's
 * glyph ink as shaped (marks above the line included: a Hindi caption's vowel signs stand well above its font
 * size), its outline, soft shadow and blur, the highlight box and the subtitle boxes, and the titles (the hook, chapter cards) while they show.
 * Undefined where nothing is drawn.
 */
export function drawnRows(captions: DrawnCaptions, font: CaptionFont): Extent | undefined {
  const direction = (text: string) => paragraphDirection(text, captions.language);
  const { box, look } = captions;
  const { box: boxed, highlight } = STYLE_PRESETS[look.style];
  const drawing: Drawing = { look, language: captions.language, direction: direction(captions.words.map((word) => word.text).join(' ')) };
  const bottom = box.height - box.marginBottom;
  const blur = 3 * softBlur(box);
  const extents: Array<Extent | undefined> = [];
  for (const state of captions.states) {
    const lines = captions.cues[state.cue]?.lines ?? [];
    if (boxed) {
      const pitch = box.fontSize + 2 * box.outline;
      extents.push({ top: bottom - lines.length * pitch, bottom });
      lines.forEach((line, index) => {
        const metrics = measureLine(line, NO_LIT, font, drawing, { base: 100, lit: 100 }, box.fontSize);
        // Each line centred on its box's middle (\an5): its baseline half its height under it, less its descent.
        const middle = bottom - (lines.length - index - 0.5) * pitch;
        extents.push(inkRows({ metrics, baseline: middle + (metrics.ascent - metrics.descent) / 2 }, 2, 0));
      });
      continue;
    }
    const sizes = stateSizes(captions, lines, state.grow, font);
    const measured = lines.map((line) => measureLine(line, state.word, font, drawing, sizes, box.fontSize));
    for (const line of stacked(measured, bottom - blockHeight(measured))) {
      extents.push(inkRows(line, box.outline + blur + 2, box.shadow));
      if (look.highlightBox && highlight) extents.push({ top: line.baseline - line.metrics.ascent - highlightPad(box), bottom: line.baseline + line.metrics.descent + highlightPad(box) });
    }
  }
  for (const title of titlesOf(captions)) {
    const titleDrawing: Drawing = { ...drawing, direction: direction(title.lines.join(' ')) };
    const fit = titleFit(title, font, titleDrawing, box);
    const measured = titleLines(title).map((line) => measureLine(line, NO_LIT, font, titleDrawing, { base: fit, lit: fit }, title.fontSize));
    for (const line of stacked(measured, title.top)) extents.push(inkRows(line, titleOutline(title) + 2, box.shadow));
  }
  return unionOf(extents);
}

/** The `lit` of a line with no word lit. */
const NO_LIT = -1;
