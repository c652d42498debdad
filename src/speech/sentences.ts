/** A piece of the request text, with its place in it (UTF-16 offsets). */
export interface TextSpan {
  text: string;
  offset: number;
}

/** Longest piece handed to an engine in one call: long enough for natural prosody, short enough to stream and isolate. */
export const MAX_SPAN_LENGTH = 400;

const sentenceSegmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });

/**
 * Splits text at sentence boundaries (Unicode rules, any language); a sentence longer than maxLength is cut
 * at the last clause mark or space before the limit. Spans keep their offsets; blank spans are dropped.
 */
export function splitSentences(text: string, maxLength = MAX_SPAN_LENGTH): TextSpan[] {
  const spans: TextSpan[] = [];
  for (const sentence of mergeAbbreviations(sentenceSegmenter.segment(text))) {
    for (const piece of cutLong(sentence.text, sentence.offset, maxLength)) {
      const trimmed = trimSpan(piece);
      if (trimmed) spans.push(trimmed);
    }
  }
  return spans.length > MAX_SPANS ? joinShortSpans(text, spans, maxLength) : spans;
}

/**
 * Engine calls per text at most, give or take: each call costs a few milliseconds to tens of milliseconds whatever
 * its length, so a text of a thousand one-word sentences ("A. A. A. …") would spend most of its deadline on them.
 * Ordinary prose (5000 characters make about 70 sentences) stays one sentence a call.
 */
export const MAX_SPANS = 120;

/** Joins neighbouring spans (with the text between them) into about MAX_SPANS pieces of at most maxLength. */
function joinShortSpans(text: string, spans: readonly TextSpan[], maxLength: number): TextSpan[] {
  const target = Math.min(maxLength, Math.ceil(text.length / MAX_SPANS));
  const joined: TextSpan[] = [];
  for (const span of spans) {
    const last = joined.at(-1);
    const end = span.offset + span.text.length;
    if (last && last.text.length < target && end - last.offset <= maxLength) {
      joined[joined.length - 1] = { text: text.slice(last.offset, end), offset: last.offset };
    } else {
      joined.push(span);
    }
  }
  return joined;
}

/**
 * Longest piece cut from a run with no space or clause mark in it: no word is that long, and a run of letters or
 * digits (spelled out one by one) makes minutes of speech in one engine call, too long to stop at a limit.
 */
const MAX_UNBROKEN_LENGTH = 100;

function* cutLong(text: string, offset: number, maxLength: number): Generator<TextSpan> {
  let start = 0;
  while (text.length - start > maxLength) {
    const window = text.slice(start, start + maxLength);
    const clause = Math.max(...[',', ';', ':', '—', '–', '、', '，'].map((mark) => window.lastIndexOf(mark)));
    const space = window.search(/\s\S*$/);
    const cut = clause > maxLength / 2 ? clause + 1 : space > 0 ? space + 1 : Math.min(maxLength, MAX_UNBROKEN_LENGTH);
    yield { text: text.slice(start, start + cut), offset: offset + start };
    start += cut;
  }
  yield { text: text.slice(start), offset: offset + start };
}

function trimSpan(span: TextSpan): TextSpan | undefined {
  const text = span.text.trim();
  if (!text) return undefined;
  return { text, offset: span.offset + span.text.length - span.text.trimStart().length };
}

// Unicode sentence rules end a sentence after "Mr." or "e.g."; a pause there would sound wrong.
const ABBREVIATION_END = /(?:^|\s)(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|Mt|vs|etc|e\.g|i\.e|No|Fig|approx)\.\s*$/i;

function* mergeAbbreviations(segments: Iterable<Intl.SegmentData>): Generator<TextSpan> {
  let pending: TextSpan | undefined;
  for (const { segment, index } of segments) {
    const current: TextSpan = pending ? { text: pending.text + segment, offset: pending.offset } : { text: segment, offset: index };
    if (ABBREVIATION_END.test(current.text)) {
      pending = current;
      continue;
    }
    pending = undefined;
    yield current;
  }
  if (pending) yield pending;
}
