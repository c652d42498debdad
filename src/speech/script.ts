// What a request asks to be said, as the synthesizer speaks it: the written text (what captions, timestamps and
// billing read) cut into utterances, each the text an engine is given with every unit of it mapped back to the
// written words it stands for, and how to say it. Plain text makes one utterance per sentence, said as written;
// SSML (ssml/) makes them from its markup.
import { silenceEmoji } from '../engines/emoji-text.js';
import { MappedTextBuilder, type MappedText } from '../engines/mapped-text.js';
import type { PhonemeSpan } from '../engines/types.js';
import { splitSentences, type TextSpan } from './sentences.js';

export interface Utterance {
  /** The written text it stands for: `text` is Script.text.slice(offset, offset + text.length). */
  span: TextSpan;
  /** What the engine is given, each UTF-16 unit mapped to the span of Script.text it stands for. */
  spoken: MappedText;
  /** Faster (> 1) or slower than the request's speed (SSML prosody rate, emphasis). */
  rate: number;
  /** Gain in dB (SSML prosody volume, emphasis); -Infinity is silent. */
  volumeDb: number;
  /** A language to speak it in other than the voice's (SSML lang, xml:lang). */
  language?: string;
  /** Seconds of silence before it in place of the usual pause (SSML break); undefined: the usual pause. */
  pauseBefore?: number;
  /** Spans of `spoken` to say as IPA (SSML phoneme, lexicons), for voices that take phonemes. */
  phonemes?: PhonemeSpan[];
}

/** An SSML mark: a name at a place in the written text. */
export interface ScriptMark {
  name: string;
  offset: number;
}

export interface Script {
  /** The written text: the request's text as sent, or an SSML document's text without its markup. */
  text: string;
  utterances: Utterance[];
  marks: ScriptMark[];
  /** Spans of the written text given as IPA (SSML phoneme), which only some engines take. */
  phonemes?: PhonemeSpan[];
}

/** Appends `source`'s units [start, end) as they are, each standing for itself at `shift` + its index in the written text. */
export function appendAsWritten(builder: MappedTextBuilder, source: string, start: number, end: number, shift = 0): MappedTextBuilder {
  for (let index = start; index < end; index += 1) builder.append(source[index] as string, index + shift, index + shift + 1);
  return builder;
}

/** Plain text: one utterance per sentence (sentences.ts), emoji left out of what is spoken. */
export function plainScript(text: string): Script {
  const utterances = splitSentences(silenceEmoji(text)).map((span) => ({
    span: { text: text.slice(span.offset, span.offset + span.text.length), offset: span.offset },
    spoken: appendAsWritten(new MappedTextBuilder(), span.text, 0, span.text.length, span.offset).build(),
    rate: 1,
    volumeDb: 0,
  }));
  return { text, utterances, marks: [] };
}
