import { breakIntoCues, HOLD_SECONDS, joinLine, type CaptionText, type LineFits } from './groups.js';

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

export { breakIntoCues, HOLD_SECONDS, joinLine, MAX_LINES, MIN_CUE_SECONDS, phrasesOf } from './groups.js';
export type { CaptionPiece, CaptionText, CueGroup, CueShape, LineFits } from './groups.js';

/** Audio captions' lines: at most 42 characters, the usual subtitle limit. */
const LINE_CHARACTERS = 42;

export const fitsCharacters: LineFits = (line) => line.length <= LINE_CHARACTERS;

/** A word or a piece of one as a text cue shows it: pieces of one word share its start. */
export type CueWord = Pick<CaptionText, 'text' | 'start' | 'spaceBefore'>;

export interface AudioCue {
  start: number;
  end: number;
  /** Who says it (a dialogue's speaker): WebVTT's <v> span. */
  voice?: string;
  /** One or two lines of words. */
  lines: CueWord[][];
}

/**
 * Cues for audio: the breaker with lines of at most 42 characters, each cue held a while after its last word; with
 * `speakerOf` (a dialogue), each cue says who speaks its first word.
 */
export function audioCues(words: readonly CaptionText[], speakerOf?: (word: number) => string | undefined): AudioCue[] {
  const groups = breakIntoCues(words, fitsCharacters);
  return groups.map((group, index) => {
    const next = groups[index + 1]?.start ?? Number.POSITIVE_INFINITY;
    const end = Math.max(group.end, Math.min(group.end + HOLD_SECONDS, next));
    const voice = speakerOf?.(group.lines[0]?.[0]?.word ?? -1);
    return {
      start: group.start,
      end: Math.max(end, group.start + 0.001),
      ...(voice ? { voice } : {}),
      lines: group.lines.map((line) => line.map((piece) => ({ text: piece.text, start: (words[piece.word] as CaptionText).start, spaceBefore: piece.spaceBefore }))),
    };
  });
}

/** What a WebVTT file needs of a cue: when it shows, and its lines of words with when each begins. */
export interface VttCue {
  start: number;
  end: number;
  /** Who says it: written as a voice span, `<v Name>`. */
  voice?: string;
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
    const voice = cue.voice ? `<v ${escapeVttText(cue.voice)}>` : '';
    return `${vttTime(cue.start)} --> ${vttTime(cue.end)}\n${voice}${lines.join('\n')}`;
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

/**
 * SRT of the cues. SRT has no voice span: a dialogue's cue names who speaks before its first line ("Joe: Knock
 * knock."), as transcripts and subtitle editors write a speaker.
 */
export function srtFile(cues: readonly AudioCue[]): string {
  const srtTime = (seconds: number) => vttTime(seconds).replace('.', ',');
  return cues
    .map((cue, index) => {
      const lines = cue.lines.map((line, at) => escapeSrtText((at === 0 && cue.voice ? `${cue.voice}: ` : '') + joinLine(line, (word) => (line[word] as CueWord).text)));
      return `${index + 1}\n${srtTime(cue.start)} --> ${srtTime(cue.end)}\n${lines.join('\n')}\n`;
    })
    .join('\n');
}

/** WebVTT of chapters (a chapters track, as HTML's <track kind="chapters"> takes it): a cue each, its title as its text. */
export function chaptersVttFile(chapters: ReadonlyArray<{ title: string; start: number; end: number }>): string {
  const blocks = chapters.map((chapter, index) => `chapter-${index + 1}\n${vttTime(chapter.start)} --> ${vttTime(Math.max(chapter.end, chapter.start + 0.001))}\n${escapeVttText(chapter.title)}`);
  return ['WEBVTT', ...blocks, ''].join('\n\n');
}
