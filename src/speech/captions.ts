import type { SpokenWord } from './words.js';

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

/** Cuts a word too long for a line into pieces that fit, between grapheme clusters. */
function cutToFit(text: string, fits: LineFits): string[] {
  if (fits(text)) return [text];
  const pieces: string[] = [];
  let current = '';
  for (const { segment } of graphemes.segment(text)) {
    if (current && !fits(current + segment)) {
      pieces.push(current);
      current = '';
    }
    current += segment;
  }
  if (current) pieces.push(current);
  return pieces;
}

/** How big a cue may grow: lines (MAX_LINES by default) and, for styles that show a few words at a time, words. */
export interface CueShape {
  maxLines?: number;
  maxWords?: number;
}

/**
 * The one caption breaker: greedy line filling with `fits`; a line ends at a line break of the request text, a cue
 * at a sentence, a long pause, after `maxLines` full lines or once it holds `maxWords` words.
 */
export function breakIntoCues(words: readonly CaptionText[], fits: LineFits, shape: CueShape = {}): CueGroup[] {
  const maxLines = shape.maxLines ?? MAX_LINES;
  const maxWords = shape.maxWords ?? Infinity;
  const cut = words.map((word) => cutToFit(word.text, fits));
  const groups: CaptionPiece[][][] = [];
  let lines: CaptionPiece[][] = [[]];
  const lineText = (line: readonly CaptionPiece[]) => joinLine(line, (index) => (line[index] as CaptionPiece).text);
  const currentLine = () => lines[lines.length - 1] as CaptionPiece[];
  const newLine = () => {
    if (lines.length < maxLines) lines.push([]);
    else newCue();
  };
  const wordsInCue = () => new Set(lines.flat().map((piece) => piece.word)).size;
  const newCue = () => {
    if (currentLine().length > 0 || lines.length > 1) groups.push(lines);
    lines = [[]];
  };
  words.forEach((word, index) => {
    const previous = words[index - 1];
    if (word.sentenceStart || (previous && word.start - previous.end > PAUSE_SECONDS) || wordsInCue() >= maxWords) newCue();
    else if (word.breakBefore && currentLine().length > 0) newLine();
    (cut[index] as string[]).forEach((text, part) => {
      const piece = { text, word: index, spaceBefore: part === 0 && word.spaceBefore !== false };
      if (currentLine().length > 0 && !fits(lineText([...currentLine(), piece]))) newLine();
      currentLine().push(piece);
    });
  });
  newCue();

  const shown = words.map(() => 0);
  /** When piece `part` of a word begins to be said; its last piece ends with the word. */
  const said = (index: number, part: number) => {
    const word = words[index] as CaptionText;
    const pieces = (cut[index] as string[]).length;
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
