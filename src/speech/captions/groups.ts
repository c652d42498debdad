import type { SpokenWord } from '../words.js';
import { endsSentence, mayBreakBetween, mayStartLine } from './line-breaks.js';
import { phraseStarts } from './phrases.js';

/**
 * The one caption breaker, shared by every style, audio captions and the title: which words form a cue (a caption,
 * or a group of the styles that show a few words at a time), its lines, and when it shows.
 */

/** What the caption breaker needs of a spoken word. */
export type CaptionText = Pick<SpokenWord, 'text' | 'start' | 'end' | 'sentenceStart' | 'breakBefore'> & Partial<Pick<SpokenWord, 'spaceBefore'>>;

/** Whether one line of caption text fits: a character count for audio captions, a measured width for video. */
export type LineFits = (line: string) => boolean;

/** Part of a word placed on a line; a word too long for a line is cut into several pieces. */
export interface CaptionPiece {
  text: string;
  /** Index into the words given to the breaker. */
  word: number;
  /** A space goes before it on a line (not between words of a script written without spaces, nor inside a cut word). */
  spaceBefore: boolean;
}

/** Words or pieces as one line: a space before those that have one in the text, none at the start. */
export function joinLine(line: ReadonlyArray<{ spaceBefore?: boolean }>, drawn: (index: number) => string): string {
  return line.map((piece, index) => (index > 0 && piece.spaceBefore !== false ? ' ' : '') + drawn(index)).join('');
}

/** One cue as the breaker makes it, with the times of what it shows, before audio or video give it times of its own. */
export interface CueGroup {
  /** When its first piece is said: a word cut over several cues shares its spoken time among its pieces, in order. */
  start: number;
  /** When its last piece has been said. */
  end: number;
  /** One to MAX_LINES lines. */
  lines: CaptionPiece[][];
}

/** The usual subtitle limit: two lines. */
export const MAX_LINES = 2;
/** A pause longer than this starts a new cue. */
const PAUSE_SECONDS = 0.7;
/** A cue stays up this long after its last word when nothing follows at once. */
export const HOLD_SECONDS = 0.5;
/** A cue shown for less flashes by (a frame in three at 30 fps): a sentence is never cut into cues that short. */
export const MIN_CUE_SECONDS = 0.3;

/** How big a cue may grow, and how lines are weighed when words are spread evenly. */
export interface CueShape {
  /** Lines per cue (MAX_LINES by default). */
  maxLines?: number;
  /** Phrases per cue, for styles that show a few words at a time (a phrase is a word in scripts written with spaces). */
  maxWords?: number;
  /** The voice's language (BCP 47): which phrase model reads Chinese (phrases.ts). */
  language?: string;
  /** How long a line is, in any unit (a measured width for video); graphemes by default. */
  measure?: (line: string) => number;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const graphemeCount = (line: string) => [...graphemes.segment(line)].length;

/** A piece of a word cut to fit a line: its text, and whether a space stood before it inside the word. */
interface Cut {
  text: string;
  afterSpace: boolean;
}

/**
 * Cuts a word too long for a line into pieces that fit: a word joined from several (marks, symbols or emoji of their
 * own, or a token no word event fell in, join the word beside them: words.ts) between those first, keeping the space
 * before each, so "Rated ★★★★★" keeps its stars together; then between grapheme clusters.
 */
function cutToFit(text: string, fits: LineFits): Cut[] {
  if (fits(text) || !text.includes(' ')) return cutClusters(text, fits).map((piece) => ({ text: piece, afterSpace: false }));
  const pieces: string[] = [];
  for (const part of text.split(' ')) {
    const last = pieces.at(-1);
    if (last !== undefined && fits(`${last} ${part}`)) pieces[pieces.length - 1] = `${last} ${part}`;
    else pieces.push(part);
  }
  return pieces.flatMap((piece, index) => cutClusters(piece, fits).map((cluster, part) => ({ text: cluster, afterSpace: index > 0 && part === 0 })));
}

/** Cuts between grapheme clusters; a mark no line starts with takes the cluster before it along. */
function cutClusters(text: string, fits: LineFits): string[] {
  if (fits(text)) return [text];
  const pieces: string[] = [];
  let current: string[] = [];
  for (const { segment } of graphemes.segment(text)) {
    if (current.length > 0 && !fits(current.join('') + segment)) {
      const carried = !mayStartLine(segment) && current.length > 1 ? current.splice(-1) : [];
      pieces.push(current.join(''));
      current = carried;
    }
    current.push(segment);
  }
  if (current.length > 0) pieces.push(current.join(''));
  return pieces;
}

/** What no line breaks inside: a phrase (a word in scripts written with spaces), or one piece of a cut word. */
interface Unit {
  pieces: CaptionPiece[];
  /** When its first piece begins to be said, and when its last has been. */
  start: number;
  end: number;
  /** A line break of the request text comes before it. */
  lineBreak: boolean;
}

const lineText = (line: readonly CaptionPiece[]) => joinLine(line, (index) => (line[index] as CaptionPiece).text);
const pauseBefore = (words: readonly CaptionText[], index: number) => index > 0 && (words[index] as CaptionText).start - (words[index - 1] as CaptionText).end > PAUSE_SECONDS;

/**
 * The words as sentences of units. A sentence ends where the engine spoke one on its own, at a long pause, or after a
 * mark of Chinese and Japanese that ends one (line-breaks.ts endsSentence): no cue ever holds the end of one sentence
 * and the start of the next. Inside a sentence, a unit begins where a phrase begins (phrases.ts) and a line may end
 * (line-breaks.ts mayBreakBetween); a phrase too wide for a line is split at its words, a word too wide cut.
 */
function sentencesOf(words: readonly CaptionText[], fits: LineFits, language: string | undefined): Unit[][] {
  const phrases = phraseStarts(words, language);
  const breakable = words.map((word, index) => index === 0 || mayBreakBetween((words[index - 1] as CaptionText).text, word.text));
  const sentenceStart = (index: number) => index === 0 || (words[index] as CaptionText).sentenceStart || pauseBefore(words, index) || (endsSentence((words[index - 1] as CaptionText).text) && breakable[index]);
  // Runs of word indices no line breaks inside, each inside one sentence.
  const runs: number[][] = [];
  const sentenceOfRun: number[] = [];
  words.forEach((word, index) => {
    const starts = sentenceStart(index);
    if (starts || word.breakBefore || (phrases[index] && breakable[index])) {
      runs.push([index]);
      sentenceOfRun.push(starts ? runs.length - 1 : (sentenceOfRun.at(-1) as number));
    } else (runs.at(-1) as number[]).push(index);
  });
  const wordsFit = (run: readonly number[]) => fits(lineText(run.map((index) => ({ text: (words[index] as CaptionText).text, word: index, spaceBefore: (words[index] as CaptionText).spaceBefore !== false }))));
  const sentences = new Map<number, Unit[]>();
  runs.forEach((run, position) => {
    const sentence = sentenceOfRun[position] as number;
    const units = sentences.get(sentence) ?? [];
    sentences.set(sentence, units);
    for (const part of splitToFit(run, wordsFit, breakable)) units.push(...unitsOfWords(part, words, fits));
  });
  return [...sentences.values()];
}

/** A run too wide for a line, split where a line may end between its words, then into single words. */
function splitToFit(run: number[], fits: (run: readonly number[]) => boolean, breakable: readonly boolean[]): number[][] {
  if (run.length === 1 || fits(run)) return [run];
  const parts: number[][] = [];
  for (const index of run) {
    const last = parts.at(-1);
    if (last && !breakable[index]) last.push(index);
    else parts.push([index]);
  }
  return parts.flatMap((part) => (part.length === 1 || fits(part) ? [part] : part.map((index) => [index])));
}

/** A run of words as one unit, or, when it is one word too wide for a line, one unit per piece with its share of the word's time. */
function unitsOfWords(run: readonly number[], words: readonly CaptionText[], fits: LineFits): Unit[] {
  const first = words[run[0] as number] as CaptionText;
  const last = words[run.at(-1) as number] as CaptionText;
  const whole = (index: number): CaptionPiece => ({ text: (words[index] as CaptionText).text, word: index, spaceBefore: (words[index] as CaptionText).spaceBefore !== false });
  const cut = run.length === 1 ? cutToFit(first.text, fits) : [];
  if (cut.length < 2) return [{ pieces: run.map(whole), start: first.start, end: last.end, lineBreak: first.breakBefore }];
  const share = (part: number) => first.start + ((first.end - first.start) * part) / cut.length;
  return cut.map(({ text, afterSpace }, part) => ({
    pieces: [{ text, word: run[0] as number, spaceBefore: part === 0 ? first.spaceBefore !== false : afterSpace }],
    start: share(part),
    end: share(part + 1),
    lineBreak: part === 0 && first.breakBefore,
  }));
}

/** Runs of consecutive units [from, to): their text on one line, whether it fits, its length; each worked out once. */
interface Spans {
  units: readonly Unit[];
  text(from: number, to: number): string;
  fits(from: number, to: number): boolean;
  length(from: number, to: number): number;
}

function spansOf(units: readonly Unit[], fits: LineFits, measure: (line: string) => number): Spans {
  const [texts, fitting, lengths] = [new Map<number, string>(), new Map<number, boolean>(), new Map<number, number>()];
  const key = (from: number, to: number) => from * (units.length + 1) + to;
  const cached = <T>(known: Map<number, T>, from: number, to: number, make: () => T): T => {
    const at = key(from, to);
    if (!known.has(at)) known.set(at, make());
    return known.get(at) as T;
  };
  const text = (from: number, to: number): string =>
    cached(texts, from, to, () => {
      const last = units[to - 1] as Unit;
      const own = lineText(last.pieces);
      return to === from + 1 ? own : `${text(from, to - 1)}${last.pieces[0]?.spaceBefore === false ? '' : ' '}${own}`;
    });
  return {
    units,
    text,
    fits: (from, to) => cached(fitting, from, to, () => fits(text(from, to))),
    length: (from, to) => cached(lengths, from, to, () => measure(text(from, to))),
  };
}

/** The fewest lines units [from, to) take, filled one after the other (a line break of the text starts one), for every `to` from a `from` at once, up to `limit`. */
function lineCounts(spans: Spans, limit: number): (from: number, to: number) => number {
  const counts = new Map<number, number[]>();
  return (from, to) => {
    let known = counts.get(from);
    if (!known) {
      known = [0];
      let lineStart = from;
      for (let index = from; index < spans.units.length && (known.at(-1) as number) <= limit; index++) {
        const opens = index === from || (spans.units[index] as Unit).lineBreak || !spans.fits(lineStart, index + 1);
        if (opens) lineStart = index;
        known.push((known.at(-1) as number) + (opens ? 1 : 0));
      }
      counts.set(from, known);
    }
    return known[to - from] ?? Infinity;
  };
}

/** Costs compared in order: the first that differs decides. */
type Cost = readonly number[];
const less = (a: Cost, b: Cost) => {
  const index = a.findIndex((value, position) => value !== b[position]);
  return index >= 0 && (a[index] as number) < (b[index] as number);
};

/**
 * Units cut into consecutive parts, each `allowed` (a part allowed stays allowed when it loses its first unit), at
 * the least total cost, costs added place by place: a shortest path over the places between units. With `count`,
 * exactly that many parts. Parts are given as [from, to) places.
 */
function partition(size: number, allowed: (from: number, to: number) => boolean, cost: (from: number, to: number) => Cost, count?: number): Array<[number, number]> | undefined {
  type Step = { cost: Cost; from: number };
  const layers = count ?? 1;
  // best[layer][to]: the cheapest way to put units [0, to) in layer + 1 parts; with no count, in any number (layer 0).
  const best = Array.from({ length: layers }, () => new Array<Step | undefined>(size + 1));
  for (let layer = 0; layer < layers; layer++) {
    for (let to = 1; to <= size; to++) {
      for (let from = to - 1; from >= 0 && allowed(from, to); from--) {
        const base = from === 0 ? (layer === 0 ? cost(0, to).map(() => 0) : undefined) : best[count === undefined ? 0 : layer - 1]?.[from]?.cost;
        if (!base) continue;
        const total = cost(from, to).map((value, index) => value + (base[index] as number));
        const known = best[layer]?.[to];
        if (!known || less(total, known.cost)) (best[layer] as Array<Step | undefined>)[to] = { cost: total, from };
      }
    }
  }
  const parts: Array<[number, number]> = [];
  for (let [layer, to] = [layers - 1, size]; to > 0; layer = count === undefined ? 0 : layer - 1) {
    const step = best[layer]?.[to];
    if (!step) return undefined;
    parts.unshift([step.from, to]);
    to = step.from;
  }
  return parts;
}

/** Measured once per text. */
function memo<T>(measure: (line: string) => T): (line: string) => T {
  const known = new Map<string, T>();
  return (line) => {
    if (!known.has(line)) known.set(line, measure(line));
    return known.get(line) as T;
  };
}

/**
 * Units [from, to) in exactly `count` lines, as even as can be: the longest line as short as it can be, then the
 * lengths as alike as they can be (the least sum of squares). A line break of the text starts a line; a lone unit
 * always fits (it was cut to). Undefined when they do not go in `count` lines.
 */
function balancedLines(spans: Spans, [start, end]: readonly [number, number], count: number): Unit[][] | undefined {
  const at = (place: number) => start + place;
  // breaks[place]: the first place after it where a line break of the text starts a unit.
  const breaks: number[] = [];
  for (let place = end - start, next = Infinity; place >= 0; place--) [breaks[place], next] = [next, (spans.units[at(place)] as Unit | undefined)?.lineBreak ? place : next];
  const allowed = (from: number, to: number) => to === from + 1 || ((breaks[from] as number) >= to && spans.fits(at(from), at(to)));
  const length = (from: number, to: number) => spans.length(at(from), at(to));
  const size = end - start;
  const limits = new Set<number>();
  for (let to = 1; to <= size; to++) for (let from = to - 1; from >= 0 && allowed(from, to); from--) limits.add(length(from, to));
  const sorted = [...limits].sort((a, b) => a - b);
  const within = (limit: number) => (from: number, to: number) => allowed(from, to) && length(from, to) <= limit;
  const enough = (index: number) => partition(size, within(sorted[index] as number), () => [0], count) !== undefined;
  if (sorted.length === 0 || !enough(sorted.length - 1)) return undefined;
  // The least limit on a line's length with which `count` lines are enough.
  let [low, high] = [0, sorted.length - 1];
  while (low < high) {
    const middle = (low + high) >> 1;
    if (enough(middle)) high = middle;
    else low = middle + 1;
  }
  return partition(size, within(sorted[low] as number), (from, to) => [length(from, to) ** 2], count)?.map(([from, to]) => spans.units.slice(at(from), at(to)));
}

/**
 * A sentence's cues: the fewest cues that no cue shown under MIN_CUE_SECONDS forces, each at most `maxLines` lines
 * and `maxWords` units, starting at the text's own line breaks where they can, with the words spread as evenly as can
 * be (so no word is left alone on a cue of its own), then each cue's lines balanced the same way. `next` is when the
 * next sentence begins.
 */
function sentenceCues(spans: Spans, next: number, { maxLines, maxWords }: { maxLines: number; maxWords: number }): Unit[][][] {
  const { units } = spans;
  const lines = lineCounts(spans, maxLines);
  const shows = (from: number, to: number) => (to < units.length ? (units[to] as Unit).start : Math.min((units[to - 1] as Unit).end + HOLD_SECONDS, next)) - (units[from] as Unit).start;
  const cues = partition(
    units.length,
    (from, to) => to === from + 1 || (to - from <= maxWords && lines(from, to) <= maxLines),
    (from, to) => [shows(from, to) < MIN_CUE_SECONDS && !(from === 0 && to === units.length) ? 1 : 0, 1, from > 0 && !(units[from] as Unit).lineBreak ? 1 : 0, spans.length(from, to) ** 2],
  ) as Array<[number, number]>;
  return cues.map((cue) => balancedLines(spans, cue, Math.min(lines(cue[0], cue[1]), maxLines)) ?? [units.slice(...cue)]);
}

/**
 * The one caption breaker, for every style and for audio captions: the words in sentences (sentencesOf), each
 * sentence in cues of whole phrases (sentenceCues), lines balanced inside each cue. A cue of a word cut over several
 * cues shares the word's spoken time among its pieces, in order.
 */
export function breakIntoCues(words: readonly CaptionText[], fits: LineFits, shape: CueShape = {}): CueGroup[] {
  const cachedFits = memo(fits);
  const measure = memo(shape.measure ?? graphemeCount);
  const sentences = sentencesOf(words, cachedFits, shape.language);
  const limits = { maxLines: shape.maxLines ?? MAX_LINES, maxWords: shape.maxWords ?? Infinity };
  return sentences.flatMap((units, index) =>
    sentenceCues(spansOf(units, cachedFits, measure), sentences[index + 1]?.[0]?.start ?? Infinity, limits).map((lines) => ({
      start: (lines[0]?.[0] as Unit).start,
      end: (lines.at(-1)?.at(-1) as Unit).end,
      lines: lines.map((line) => line.flatMap((unit) => unit.pieces)),
    })),
  );
}

/** The phrases of the words as a line shows them (what no line breaks inside while it fits). */
export function phrasesOf(words: readonly CaptionText[], language?: string): string[] {
  return sentencesOf(words, () => true, language).flatMap((units) => units.map((unit) => lineText(unit.pieces)));
}

/**
 * Words in exactly `count` lines, balanced as a cue's lines are and broken only where they may break (the title,
 * which is sized to its lines after): undefined when the text's own line breaks make more lines.
 */
export function balancedText(words: readonly CaptionText[], count: number, measure: (line: string) => number, language?: string): CaptionPiece[][] | undefined {
  const always: LineFits = () => true;
  const units = sentencesOf(words, always, language).flat();
  return balancedLines(spansOf(units, always, memo(measure)), [0, units.length], count)?.map((line) => line.flatMap((unit) => unit.pieces));
}
