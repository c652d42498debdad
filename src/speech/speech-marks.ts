// Speech marks, as Amazon Polly returns them: when each sentence, word and SSML <mark> is reached in the file.
import type { Speech } from './speech.js';
import { fileClock, type SpokenWord } from './words.js';

export interface SpeechMark {
  type: 'sentence' | 'word' | 'ssml';
  /** Seconds into the file. */
  time: number;
  /** UTF-16 offsets into the written text. */
  start: number;
  end: number;
  /** The sentence or word as written, or the mark's name. */
  value: string;
}

/** The marks of `speech` in a file of `fileDuration` seconds, given its words already timed in that file (timedWordsIn). */
export function speechMarks(text: string, speech: Speech, words: readonly SpokenWord[], fileDuration: number): SpeechMark[] {
  const at = fileClock(speech, fileDuration);
  const marks: SpeechMark[] = [
    ...speech.sentences.map((sentence) => ({
      type: 'sentence' as const,
      time: at(sentence.start),
      start: sentence.textOffset,
      end: sentence.textOffset + sentence.textLength,
      value: text.slice(sentence.textOffset, sentence.textOffset + sentence.textLength),
    })),
    ...words.map((word) => ({ type: 'word' as const, time: word.start, start: word.offset, end: word.offset + word.length, value: text.slice(word.offset, word.offset + word.length) })),
    // A mark is reached when the first word after it starts (at the end, when the sound ends).
    ...(speech.marks ?? []).map((mark) => ({
      type: 'ssml' as const,
      time: words.find((word) => word.offset >= mark.offset)?.start ?? at(speech.sentences.at(-1)?.end ?? 0),
      start: mark.offset,
      end: mark.offset,
      value: mark.name,
    })),
  ];
  const order = { sentence: 0, ssml: 1, word: 2 };
  return marks.sort((a, b) => a.time - b.time || a.start - b.start || order[a.type] - order[b.type]);
}
