// What a request asks to be said, as the synthesizer speaks it: the written text (what captions, timestamps and
// billing read) cut into utterances, each the text an engine is given with every unit of it mapped back to the
// written words it stands for, and how to say it. Plain text makes one utterance per sentence, said as written;
// SSML (ssml/) makes them from its markup.
import { silenceEmoji } from '../engines/emoji-text.js';
import { MappedTextBuilder, type MappedText } from '../engines/mapped-text.js';
import type { PhonemeSpan } from '../engines/types.js';
import { splitSentences, type TextSpan } from './sentences.js';
import { CHAPTER_PAUSE_SECONDS, markdownChapters, TITLE_PAUSE_SECONDS, type ScriptChapter } from './chapters.js';

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
  /** A voice other than the request's, by its id (SSML voice: a dialogue's turn, `segments`). */
  voice?: string;
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
  /** Chapters (chapters.ts): Markdown headings of plain text, each title an utterance of its own. */
  chapters?: ScriptChapter[];
}

/** Appends `source`'s units [start, end) as they are, each standing for itself at `shift` + its index in the written text. */
export function appendAsWritten(builder: MappedTextBuilder, source: string, start: number, end: number, shift = 0): MappedTextBuilder {
  for (let index = start; index < end; index += 1) builder.append(source[index] as string, index + shift, index + shift + 1);
  return builder;
}

/** Plain text: one utterance per sentence (sentences.ts), emoji left out of what is spoken; Markdown headings start chapters. */
export function plainScript(source: string): Script {
  const marked = markdownChapters(source);
  if (!marked) return { text: source, utterances: sentenceUtterances(source, 0, source.length), marks: [] };
  const { text, chapters } = marked;
  const utterances: Utterance[] = sentenceUtterances(text, 0, chapters[0]?.offset ?? 0);
  for (const [index, chapter] of chapters.entries()) {
    const titleEnd = chapter.offset + chapter.title.length;
    const title = sentenceUtterances(text, chapter.offset, titleEnd);
    const body = sentenceUtterances(text, titleEnd, chapters[index + 1]?.offset ?? text.length);
    // A pause before each title (not before the first thing said), and a shorter one between a title and its text.
    const [first] = title;
    if (first && utterances.length > 0) first.pauseBefore = CHAPTER_PAUSE_SECONDS;
    if (body[0]) body[0].pauseBefore = TITLE_PAUSE_SECONDS;
    utterances.push(...title, ...body);
  }
  return { text, utterances, marks: [], chapters };
}

/** One utterance per sentence of text[from, to), said as written. */
function sentenceUtterances(text: string, from: number, to: number): Utterance[] {
  return splitSentences(silenceEmoji(text.slice(from, to))).map((span) => ({
    span: { text: text.slice(from + span.offset, from + span.offset + span.text.length), offset: from + span.offset },
    spoken: appendAsWritten(new MappedTextBuilder(), span.text, 0, span.text.length, from + span.offset).build(),
    rate: 1,
    volumeDb: 0,
  }));
}
