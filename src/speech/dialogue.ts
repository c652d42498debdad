// A dialogue: a request's `segments` (each turn in its own voice) made into the SSML that says them (each turn a
// <voice> element), and once spoken, its turns: the stretches of the written text each said in one voice, for
// captions that say who speaks (WebVTT's <v Name>, a colour per speaker in videos), and where each segment is in
// that text (ElevenLabs' voice segments).
import { MAX_REQUEST_VOICES, type Voice } from '../engines/voice.js';
import { AppError } from '../errors.js';
import type { Script, Utterance } from './script.js';

export interface SpeakerTurn {
  /** Offsets into the written text: [offset, end). */
  offset: number;
  end: number;
  /** The voice's id, as GET /voices lists it, and its name (who speaks, in captions). */
  voice: string;
  name: string;
}

/** The script's turns, each utterance in the voice `voiceOf` gives it; undefined when it names no voice of its own. */
export function speakerTurns(script: Script, voiceOf: (utterance: Utterance) => Pick<Voice, 'id' | 'name'>): SpeakerTurn[] | undefined {
  if (!script.utterances.some((utterance) => utterance.voice !== undefined)) return undefined;
  const turns: SpeakerTurn[] = [];
  for (const utterance of script.utterances) {
    const { id, name } = voiceOf(utterance);
    const end = utterance.span.offset + utterance.span.text.length;
    const last = turns.at(-1);
    if (last && last.voice === id) last.end = end;
    else turns.push({ offset: utterance.span.offset, end, voice: id, name });
  }
  // Who speaks, as captions name them: a voice's own name ("Joe (Piper, medium), US English": "Joe"), its full name where two would read alike.
  const short = new Map(turns.map((turn) => [turn.voice, shortName(turn.name)]));
  const clash = (turn: SpeakerTurn) => turns.some((other) => other.voice !== turn.voice && short.get(other.voice) === short.get(turn.voice));
  return turns.map((turn) => (clash(turn) ? turn : { ...turn, name: short.get(turn.voice) as string }));
}

/** A voice's name without what describes it: up to its first parenthesis or comma. */
function shortName(name: string): string {
  return /^[^(,]*/u.exec(name)?.[0]?.trim() || name;
}

/** Who says each of `words` (by its offset in the written text): the turn it falls in. */
export function turnOfWord(turns: readonly SpeakerTurn[], words: ReadonlyArray<{ offset: number }>): (word: number) => SpeakerTurn | undefined {
  return (index) => {
    const offset = words[index]?.offset;
    return offset === undefined ? undefined : turns.findLast((turn) => offset >= turn.offset);
  };
}

/** A turn of a dialogue as a request gives it. */
export interface DialogueSegment {
  voice: string;
  text: string;
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const xmlEscaped = (text: string) => text.replace(/[&<>"]/gu, (character) => XML_ESCAPES[character] as string);

/**
 * 400 naming `field` for a dialogue of more different voices than MAX_REQUEST_VOICES, or more characters in all
 * than `maxCharacters` (`count`: how the caller counts them).
 */
export function assertDialogue(segments: readonly DialogueSegment[], limits: { maxCharacters: number; field: string; count?: (text: string) => number }): void {
  const voices = new Set(segments.map((segment) => segment.voice.toLowerCase()));
  const { field, maxCharacters, count = (text: string) => text.length } = limits;
  if (voices.size > MAX_REQUEST_VOICES) {
    throw new AppError('VALIDATION_ERROR', { field, message: `The dialogue has ${voices.size} different voices: a request takes ${MAX_REQUEST_VOICES} at most.` });
  }
  const length = segments.reduce((sum, segment) => sum + count(segment.text), 0);
  if (length > maxCharacters) {
    throw new AppError('VALIDATION_ERROR', { field, message: `The dialogue's turns hold ${length} characters: a request takes ${maxCharacters} at most. Send it in parts.` });
  }
}

/** The segments as an SSML document: each a <voice> of its own, its text as written (markup characters escaped). */
export function dialogueSsml(segments: readonly DialogueSegment[]): string {
  const turns = segments.map(({ voice, text }) => `<voice name="${xmlEscaped(voice)}">${xmlEscaped(text)}</voice>`);
  return `<speak>${turns.join('\n')}</speak>`;
}

/**
 * Where each segment is in the written text of its dialogue (`written`: the text of dialogueSsml's document as read):
 * [offset, end), in order. A turn is written as XML prose is, white space collapsed and trimmed, one a line; a turn of
 * white space alone says nothing and is empty where it stands.
 */
export function segmentSpans(segments: ReadonlyArray<Pick<DialogueSegment, 'text'>>, written: string): Array<{ offset: number; end: number }> {
  let cursor = 0;
  return segments.map(({ text }) => {
    const said = text.replace(/\s+/gu, ' ').trim();
    const offset = said === '' ? -1 : written.indexOf(said, cursor);
    if (offset < 0) return { offset: cursor, end: cursor };
    cursor = offset + said.length;
    return { offset, end: cursor };
  });
}
