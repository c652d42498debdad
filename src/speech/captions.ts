import type { SpokenWord } from './words.js';
import { endsSentence, isShortWord, mayBreakBetween, mayStartLine } from './line-breaks.js';

/** Cue text is HTML-like: these three are the only characters WebVTT interprets (`-->` needs its `>`). */
export function escapeVttText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** `HH:MM:SS.mmm`; SRT writes the same with a comma. */
export function vttTime(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}.${pad(ms % 1000, 3)}`;
}

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

/** The usual subtitle limits: two lines, for audio of at most 42 characters. */
export const MAX_LINES = 2;
const LINE_CHARACTERS = 42;
/** A pause longer than this starts a new cue. */
const PAUSE_SECONDS = 0.7;
/** A cue stays up this long after its last word when nothing follows at once. */
export const HOLD_SECONDS = 0.5;

export const fitsCharacters: LineFits = (line) => line.length <= LINE_CHARACTERS;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * Cuts a word too long for a line into pieces that fit: a word joined from several (marks, symbols or emoji of their
 * own join the word beside them: words.ts) between those first, so "Rated ★★★★★" keeps its stars together, then
 * between grapheme clusters.
 */
function cutToFit(text: string, fits: LineFits): string[] {
  if (fits(text) || !text.includes(' ')) return cutClusters(text, fits);
  const pieces: string[] = [];
  for (const part of text.split(' ')) {
    const last = pieces.at(-1);
    if (last !== undefined && fits(`${last} ${part}`)) pieces[pieces.length - 1] = `${last} ${part}`;
    else pieces.push(part);
  }
  return pieces.flatMap((piece) => cutClusters(piece, fits));
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

/** How big a cue may grow: lines (MAX_LINES by default) and, for styles that show a few words at a time, words. */
export interface CueShape {
  maxLines?: number;
  maxWords?: number;
}

/** The finished cues and the lines of the one being filled (its last line open). */
interface Filling {
  cues: CaptionPiece[][][];
  lines: CaptionPiece[][];
}

/** What the filling goes by: the words, each cut to fit a line, and where a line may end between two of them. */
interface Breaker {
  words: readonly CaptionText[];
  cut: readonly string[][];
  fits: LineFits;
  maxLines: number;
  maxWords: number;
  /** A line may end before word i (line-breaks.ts). */
  breakable: readonly boolean[];
}

const lineText = (line: readonly CaptionPiece[]) => joinLine(line, (index) => (line[index] as CaptionPiece).text);
const openLine = (filling: Filling) => filling.lines[filling.lines.length - 1] as CaptionPiece[];
const wordsIn = (lines: readonly CaptionPiece[][]) => new Set(lines.flat().map((piece) => piece.word)).size;

function newCue(filling: Filling): void {
  if (openLine(filling).length > 0 || filling.lines.length > 1) filling.cues.push(filling.lines);
  filling.lines = [[]];
}

function newLine(filling: Filling, breaker: Breaker): void {
  if (filling.lines.length < breaker.maxLines) filling.lines.push([]);
  else newCue(filling);
}

/** The end of `line` that goes to the next line with `piece`: from its last place a line may end, if that fits. */
function boundTail(line: readonly CaptionPiece[], piece: CaptionPiece, breaker: Breaker): CaptionPiece[] {
  for (let index = line.length - 1; index > 0; index--) {
    const at = line[index] as CaptionPiece;
    // Between two pieces of a cut word a line may always end.
    if (!breaker.breakable[at.word] && (line[index - 1] as CaptionPiece).word !== at.word) continue;
    const tail = line.slice(index);
    return breaker.fits(lineText([...tail, piece])) ? tail : [];
  }
  return [];
}

/** Puts word `index` on the open line, piece by piece, moving to a new line (or cue) where a piece does not fit. */
function placeWord(filling: Filling, index: number, breaker: Breaker): void {
  const word = breaker.words[index] as CaptionText;
  if (word.breakBefore && openLine(filling).length > 0) newLine(filling, breaker);
  (breaker.cut[index] as string[]).forEach((text, part) => {
    const piece = { text, word: index, spaceBefore: part === 0 && word.spaceBefore !== false };
    const line = openLine(filling);
    if (line.length > 0 && !breaker.fits(lineText([...line, piece]))) {
      // A word no line may start with (ー, a small kana, a closing mark) or one after an opening bracket takes its neighbour along.
      const tail = part === 0 && !breaker.breakable[index] ? boundTail(line, piece, breaker) : [];
      line.splice(line.length - tail.length);
      newLine(filling, breaker);
      openLine(filling).push(...tail);
    }
    openLine(filling).push(piece);
  });
}

const pauseBefore = (words: readonly CaptionText[], index: number) => index > 0 && (words[index] as CaptionText).start - (words[index - 1] as CaptionText).end > PAUSE_SECONDS;

/** Whether the sentence that begins at word `index` would end inside the cue being filled, were it put there. */
function sentenceEndsInCue(filling: Filling, index: number, breaker: Breaker): boolean {
  const trial: Filling = { cues: [], lines: filling.lines.map((line) => [...line]) };
  for (let next = index; next < breaker.words.length; next++) {
    const word = breaker.words[next] as CaptionText;
    if (next > index && (word.sentenceStart || pauseBefore(breaker.words, next))) return true;
    if (wordsIn(trial.lines) >= breaker.maxWords) return false;
    placeWord(trial, next, breaker);
    if (trial.cues.length > 0) return false;
    if (endsSentence(word.text)) return true;
  }
  return true;
}

/**
 * A cue of one short word ("hearts?", "。") joins a neighbouring cue where it fits, on that cue's line or as a line of
 * its own: the cue before unless the word begins a sentence, else the one after; never across a long pause.
 */
function joinShortCues(cues: CaptionPiece[][][], breaker: Breaker): CaptionPiece[][][] {
  const { words, fits, maxLines, maxWords, breakable } = breaker;
  const roomFor = (lines: CaptionPiece[][]) => wordsIn(lines) < maxWords;
  // The word starts a line wherever it goes but at the end of the cue before: only where a line may end before it.
  const append = (lines: CaptionPiece[][], piece: CaptionPiece) => {
    const last = lines.at(-1) as CaptionPiece[];
    if (!(words[piece.word] as CaptionText).breakBefore && fits(lineText([...last, piece]))) last.push(piece);
    else if (lines.length < maxLines && breakable[piece.word]) lines.push([piece]);
    else return false;
    return true;
  };
  const prepend = (lines: CaptionPiece[][], piece: CaptionPiece) => {
    const first = lines[0] as CaptionPiece[];
    const next = (first[0] as CaptionPiece).word;
    if (!breakable[piece.word]) return false;
    if (!(words[next] as CaptionText).breakBefore && fits(lineText([piece, ...first]))) first.unshift(piece);
    else if (lines.length < maxLines && breakable[next]) lines.unshift([piece]);
    else return false;
    return true;
  };
  const joined: CaptionPiece[][][] = [];
  cues.forEach((lines, position) => {
    const pieces = lines.flat();
    const piece = pieces[0] as CaptionPiece;
    if (pieces.length !== 1 || (breaker.cut[piece.word] as string[]).length !== 1 || !isShortWord(piece.text)) {
      joined.push(lines);
      return;
    }
    const before = joined.at(-1);
    const after = cues[position + 1];
    const afterWord = (after?.[0]?.[0] as CaptionPiece | undefined)?.word ?? -1;
    const toBefore = () => before !== undefined && !pauseBefore(words, piece.word) && roomFor(before) && append(before, piece);
    const toAfter = () => after !== undefined && !pauseBefore(words, afterWord) && roomFor(after) && prepend(after, piece);
    const word = words[piece.word] as CaptionText;
    const beginsSentence = word.sentenceStart || endsSentence(words[piece.word - 1]?.text ?? '');
    if (!(beginsSentence ? toAfter() || toBefore() : toBefore() || toAfter())) joined.push(lines);
  });
  return joined;
}

/**
 * The one caption breaker: greedy line filling with `fits`, lines ending only where the script allows
 * (line-breaks.ts); a line ends at a line break of the request text, a cue at a sentence the engine spoke on its
 * own, a long pause, after `maxLines` full lines or once it holds `maxWords` words. A sentence that the text's own
 * marks begin (。！？) starts a new cue unless it would end inside the current one: no cue then ends with the first
 * words of a sentence that the next cue finishes. Last, a cue of one short word joins a neighbour (joinShortCues).
 */
export function breakIntoCues(words: readonly CaptionText[], fits: LineFits, shape: CueShape = {}): CueGroup[] {
  const breaker: Breaker = {
    words,
    cut: words.map((word) => cutToFit(word.text, fits)),
    fits,
    maxLines: shape.maxLines ?? MAX_LINES,
    maxWords: shape.maxWords ?? Infinity,
    breakable: words.map((word, index) => index === 0 || mayBreakBetween((words[index - 1] as CaptionText).text, word.text)),
  };
  const filling: Filling = { cues: [], lines: [[]] };
  words.forEach((word, index) => {
    const previous = words[index - 1];
    const hardStart = word.sentenceStart || pauseBefore(words, index) || wordsIn(filling.lines) >= breaker.maxWords;
    const sentenceStart = previous !== undefined && endsSentence(previous.text) && breaker.breakable[index] && !sentenceEndsInCue(filling, index, breaker);
    if (hardStart || sentenceStart) newCue(filling);
    placeWord(filling, index, breaker);
  });
  newCue(filling);
  const groups = joinShortCues(filling.cues, breaker);

  const shown = words.map(() => 0);
  /** When piece `part` of a word begins to be said; its last piece ends with the word. */
  const said = (index: number, part: number) => {
    const word = words[index] as CaptionText;
    const pieces = (breaker.cut[index] as string[]).length;
    return part >= pieces ? word.end : word.start + (word.end - word.start) * (part / pieces);
  };
  return groups.map((group) => {
    const first = group[0]?.[0]?.word ?? 0;
    const start = said(first, shown[first] as number);
    for (const piece of group.flat()) shown[piece.word] = (shown[piece.word] as number) + 1;
    const last = group.at(-1)?.at(-1)?.word ?? first;
    return { start, end: said(last, shown[last] as number), lines: group };
  });
}

/** A word or a piece of one as a text cue shows it: pieces of one word share its start. */
export type CueWord = Pick<CaptionText, 'text' | 'start' | 'spaceBefore'>;

export interface AudioCue {
  start: number;
  end: number;
  /** One or two lines of words. */
  lines: CueWord[][];
}

/** Cues for audio: the breaker with lines of at most 42 characters, each cue held a while after its last word. */
export function audioCues(words: readonly CaptionText[]): AudioCue[] {
  const groups = breakIntoCues(words, fitsCharacters);
  return groups.map((group, index) => {
    const next = groups[index + 1]?.start ?? Number.POSITIVE_INFINITY;
    const end = Math.max(group.end, Math.min(group.end + HOLD_SECONDS, next));
    return {
      start: group.start,
      end: Math.max(end, group.start + 0.001),
      lines: group.lines.map((line) => line.map((piece) => ({ text: piece.text, start: (words[piece.word] as CaptionText).start, spaceBefore: piece.spaceBefore }))),
    };
  });
}

/** What a WebVTT file needs of a cue: when it shows, and its lines of words with when each begins. */
export interface VttCue {
  start: number;
  end: number;
  lines: ReadonlyArray<ReadonlyArray<CueWord>>;
}

/** WebVTT with a timestamp tag where each later word begins (karaoke-style players highlight along). */
export function webVttFile(cues: readonly VttCue[]): string {
  const blocks = cues.map((cue) => {
    let lastTag = cue.start;
    const lines = cue.lines.map((line) =>
      joinLine(line, (index) => {
        const word = line[index] as CueWord;
        // Timestamps must rise strictly inside the cue; pieces of one word share theirs.
        const tag = word.start > lastTag && word.start < cue.end ? `<${vttTime(word.start)}>` : '';
        lastTag = Math.max(lastTag, word.start);
        return tag + escapeVttText(word.text);
      }),
    );
    return `${vttTime(cue.start)} --> ${vttTime(cue.end)}\n${lines.join('\n')}`;
  });
  return ['WEBVTT', ...blocks, ''].join('\n\n');
}

/**
 * SRT has no escapes, and readers take any line with `-->` for a cue's timing line; the arrow is the only thing
 * to defuse (with a lookalike that reads the same).
 */
export function escapeSrtText(text: string): string {
  return text.replace(/-->/g, '\u2011\u2011>');
}

export function srtFile(cues: readonly AudioCue[]): string {
  const srtTime = (seconds: number) => vttTime(seconds).replace('.', ',');
  return cues
    .map((cue, index) => {
      const lines = cue.lines.map((line) => escapeSrtText(joinLine(line, (word) => (line[word] as CueWord).text)));
      return `${index + 1}\n${srtTime(cue.start)} --> ${srtTime(cue.end)}\n${lines.join('\n')}\n`;
    })
    .join('\n');
}
