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

export type CaptionText = Pick<SpokenWord, 'text' | 'start' | 'end' | 'sentenceStart'>;

export interface AudioCue {
  start: number;
  end: number;
  /** One or two lines of words. */
  lines: CaptionText[][];
}

/** The usual subtitle limits: two lines of at most 42 characters. */
const LINE_CHARACTERS = 42;
const MAX_LINES = 2;
/** A pause longer than this starts a new cue. */
const PAUSE_SECONDS = 0.7;
/** A cue stays up this long after its last word when nothing follows at once. */
const HOLD_SECONDS = 0.5;

/** Cues for audio: lines filled by character count; a new cue at each sentence, each long pause, and after two full lines. */
export function audioCues(words: readonly CaptionText[]): AudioCue[] {
  const groups: CaptionText[][][] = [];
  let lines: CaptionText[][] = [];
  words.forEach((word, index) => {
    const previous = words[index - 1];
    const line = lines.at(-1);
    const breaks = !previous || word.sentenceStart || word.start - previous.end > PAUSE_SECONDS;
    if (breaks || !line || [...line, word].map((piece) => piece.text).join(' ').length > LINE_CHARACTERS) {
      if (breaks || lines.length >= MAX_LINES) groups.push((lines = []));
      lines.push([word]);
    } else {
      line.push(word);
    }
  });
  return groups.map((group, index) => {
    const first = group[0]?.[0] as CaptionText;
    const last = group.at(-1)?.at(-1) as CaptionText;
    const next = groups[index + 1]?.[0]?.[0];
    const end = Math.max(last.end, Math.min(last.end + HOLD_SECONDS, next?.start ?? Number.POSITIVE_INFINITY));
    return { start: first.start, end: Math.max(end, first.start + 0.001), lines: group };
  });
}

/** What a WebVTT file needs of a cue: when it shows, and its lines of words with when each begins. */
export interface VttCue {
  start: number;
  end: number;
  lines: ReadonlyArray<ReadonlyArray<Pick<CaptionText, 'text' | 'start'>>>;
}

/** WebVTT with a timestamp tag where each later word begins (karaoke-style players highlight along). */
export function webVttFile(cues: readonly VttCue[]): string {
  const blocks = cues.map((cue) => {
    let lastTag = cue.start;
    const lines = cue.lines.map((line) =>
      line
        .map((word) => {
          // Timestamps must rise strictly inside the cue; pieces of one word share theirs.
          const tag = word.start > lastTag && word.start < cue.end ? `<${vttTime(word.start)}>` : '';
          lastTag = Math.max(lastTag, word.start);
          return tag + escapeVttText(word.text);
        })
        .join(' '),
    );
    return `${vttTime(cue.start)} --> ${vttTime(cue.end)}\n${lines.join('\n')}`;
  });
  return ['WEBVTT', ...blocks, ''].join('\n\n');
}

export function srtFile(cues: readonly AudioCue[]): string {
  const srtTime = (seconds: number) => vttTime(seconds).replace('.', ',');
  return cues
    .map((cue, index) => {
      const lines = cue.lines.map((line) => line.map((word) => word.text).join(' '));
      return `${index + 1}\n${srtTime(cue.start)} --> ${srtTime(cue.end)}\n${lines.join('\n')}\n`;
    })
    .join('\n');
}
