import type { WordTiming } from '../types.js';
import type { EspeakEvent } from './protocol.js';
import { forEachCodePoint, MappedTextBuilder, wordSegmenter, type MappedText } from '../mapped-text.js';

/** A stretch of the text [start, end) to be said as these eSpeak phoneme mnemonics (ipa.ts). */
export interface SpelledSpan {
  start: number;
  end: number;
  mnemonics: string;
}

const SSML_ESCAPES: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;' };

/**
 * eSpeak reads its input as SSML, and `[[` as the start of raw phonemes: escape both so that any text is
 * spoken as written. `text` must have gone through sanitizeText().
 */
export function toEspeakSsml(text: string, phonemes: readonly SpelledSpan[] = []): MappedText {
  const builder = new MappedTextBuilder();
  const spans = [...phonemes].sort((a, b) => a.start - b.start);
  let span = 0;
  forEachCodePoint(text, (char, offset) => {
    const end = offset + char.length;
    while (spans[span] && (spans[span] as SpelledSpan).end <= offset) span += 1;
    const given = spans[span];
    if (given && offset >= given.start) {
      // A span's text is said as its phonemes, eSpeak's [[...]], a space after so that what follows is read as text again.
      if (offset === given.start) builder.append(` [[${given.mnemonics}]] `, given.start, given.end);
      return;
    }
    builder.append(SSML_ESCAPES[char] ?? char, offset, end);
    // A space between the brackets is not spoken, and keeps eSpeak out of phoneme mode.
    if (char === '[' && text[end] === '[') builder.append(' ', offset, end);
  });
  return builder.build();
}

interface Segment {
  start: number;
  end: number;
  isSpace: boolean;
}

interface Anchor {
  offset: number;
  eventIndex: number;
  seconds: number;
}

function segmentsOf(text: string, language: string): Segment[] {
  return [...wordSegmenter(language).segment(text)].map(({ index, segment }) => ({
    start: index,
    end: index + segment.length,
    isSpace: /^\s+$/u.test(segment),
  }));
}

function segmentAt(segments: readonly Segment[], offset: number): Segment | undefined {
  let low = 0;
  let high = segments.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const segment = segments[middle];
    if (!segment) break;
    if (offset < segment.start) high = middle - 1;
    else if (offset >= segment.end) low = middle + 1;
    else return segment;
  }
  return undefined;
}

const SPEAKABLE = /[\p{L}\p{N}\p{M}]/u;

/** The word inside [start, end): up to the first space, without punctuation around it unless that is all there is. */
function wordSpan(text: string, start: number, end: number): [number, number] {
  const space = text.slice(start, end).search(/\s/u);
  const stop = space === -1 ? end : start + space;
  const chars = [...text.slice(start, stop)];
  const first = chars.findIndex((char) => SPEAKABLE.test(char));
  if (first === -1) return [start, stop];
  const last = chars.findLastIndex((char) => SPEAKABLE.test(char));
  const from = start + chars.slice(0, first).join('').length;
  return [from, from + chars.slice(first, last + 1).join('').length];
}

/** When the last sound of the word ends: the start of whatever event follows its last non-pause phoneme. */
function soundEnd(events: readonly EspeakEvent[], from: number, to: number, totalMs: number): number {
  for (let index = to - 1; index > from; index--) {
    const event = events[index];
    if (event?.type === 'phoneme' && !event.pause) return events[index + 1]?.audioMs ?? totalMs;
  }
  return events[from]?.audioMs ?? 0;
}

/**
 * Word timings from eSpeak's word events. eSpeak's positions count code points of the escaped SSML, and its word
 * lengths are unreliable after entities, numbers and emoji: only the start positions are used, mapped back to
 * the source text and snapped to word boundaries (Intl.Segmenter), one timing per source word.
 */
export function buildEspeakWordTimings(
  source: string,
  ssml: MappedText,
  events: readonly EspeakEvent[],
  durationSeconds: number,
  language: string,
): WordTiming[] {
  const segments = segmentsOf(source, language);
  const anchors: Anchor[] = [];
  events.forEach((event, eventIndex) => {
    if (event.type !== 'word') return;
    const unit = ssml.unitIndexOfCodePoint(event.textPosition - 1);
    const offset = unit === undefined ? undefined : ssml.sourceOffset(unit);
    const segment = offset === undefined ? undefined : segmentAt(segments, offset);
    // A position on a space belongs to the word before (eSpeak's second word for an emoji, for one).
    if (!segment || segment.isSpace) return;
    const previous = anchors.at(-1);
    if (previous && segment.start <= previous.offset) return;
    anchors.push({ offset: segment.start, eventIndex, seconds: event.audioMs / 1000 });
  });

  const totalMs = durationSeconds * 1000;
  return anchors.map((anchor, index) => {
    const next = anchors[index + 1];
    const [from, to] = wordSpan(source, anchor.offset, next?.offset ?? source.length);
    const endMs = soundEnd(events, anchor.eventIndex, next?.eventIndex ?? events.length, totalMs);
    const end = Math.min(Math.max(endMs / 1000, anchor.seconds), next?.seconds ?? durationSeconds);
    return {
      word: source.slice(from, to),
      start: anchor.seconds,
      end: Math.max(end, anchor.seconds),
      textOffset: from,
      textLength: to - from,
    };
  });
}
