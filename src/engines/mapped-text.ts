import { silenceEmoji } from './emoji-text.js';

// C0/C1 control characters except tab, line feed and carriage return. eSpeak reads U+0001 as the start of an
// embedded command (speed, pitch...), and a NUL would cut the text short in every C engine.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;
const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Punctuation and symbols kept at the start of a run of them; the rest of the run is blanked. */
const MAX_MARK_RUN = 3;
// Runs of marks, spaces between them included: Flite overruns its memory on a few hundred dots or commas in a row,
// and every engine spends seconds saying "asterisk" hundreds of times; none of it reads as anything more than three would.
const MARK_RUNS = new RegExp(`[\\p{P}\\p{S}](?:\\s*[\\p{P}\\p{S}]){${MAX_MARK_RUN},}`, 'gu');

/** Blanks all but the first marks of a run, one UTF-16 unit for one. */
function shortenMarkRuns(text: string): string {
  return text.replace(MARK_RUNS, (run) => {
    let kept = 0;
    let index = 0;
    for (const char of run) {
      if (/\S/u.test(char)) kept += 1;
      if (kept > MAX_MARK_RUN) break;
      index += char.length;
    }
    return run.slice(0, index) + ' '.repeat(run.length - index);
  });
}

/**
 * Replaces what no engine should see, one UTF-16 unit for one, so offsets into the result are offsets into the
 * input: control characters, lone surrogates, emoji (drawn in captions, never spoken), and long runs of
 * punctuation or symbols.
 */
export function sanitizeText(text: string): string {
  return shortenMarkRuns(silenceEmoji(text.replace(CONTROL_CHARACTERS, ' ').replace(LONE_SURROGATES, '\uFFFD')));
}

/** A text rewritten for an engine that remembers which span of the source text each of its UTF-16 units came from. */
export class MappedText {
  private codePointUnits: Int32Array | undefined;

  constructor(
    readonly text: string,
    private readonly sourceStarts: Int32Array,
    private readonly sourceEnds: Int32Array,
  ) {}

  /** The source span of this text's units [start, end), or undefined when it is empty or out of range. */
  sourceSpan(start: number, end: number): { offset: number; length: number } | undefined {
    if (start < 0 || end > this.text.length || start >= end) return undefined;
    const offset = this.sourceStarts[start] ?? 0;
    return { offset, length: (this.sourceEnds[end - 1] ?? offset) - offset };
  }

  /** The source offset of the unit at `index`. */
  sourceOffset(index: number): number | undefined {
    return this.sourceStarts[index];
  }

  /** The UTF-16 index of the code point at `codePointIndex` (engines written in C count code points). */
  unitIndexOfCodePoint(codePointIndex: number): number | undefined {
    if (!this.codePointUnits) {
      const units: number[] = [];
      let index = 0;
      for (const char of this.text) {
        units.push(index);
        index += char.length;
      }
      this.codePointUnits = Int32Array.from(units);
    }
    return this.codePointUnits[codePointIndex];
  }
}

export class MappedTextBuilder {
  private text = '';
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  /** Appends `output`, which stands for the source span [sourceStart, sourceEnd). */
  append(output: string, sourceStart: number, sourceEnd: number): void {
    this.text += output;
    for (let i = 0; i < output.length; i++) {
      this.starts.push(sourceStart);
      this.ends.push(sourceEnd);
    }
  }

  build(): MappedText {
    return new MappedText(this.text, Int32Array.from(this.starts), Int32Array.from(this.ends));
  }
}

/** Calls `visit` for each code point of `text` with its UTF-16 offset. */
export function forEachCodePoint(text: string, visit: (char: string, offset: number) => void): void {
  let offset = 0;
  for (const char of text) {
    visit(char, offset);
    offset += char.length;
  }
}

const wordSegmenters = new Map<string, Intl.Segmenter>();

/** A word segmenter for a language, made once; a tag ICU does not take gets the default's word breaks. */
export function wordSegmenter(language: string): Intl.Segmenter {
  let found = wordSegmenters.get(language);
  if (!found) {
    try {
      found = new Intl.Segmenter(language, { granularity: 'word' });
    } catch {
      found = new Intl.Segmenter(undefined, { granularity: 'word' });
    }
    wordSegmenters.set(language, found);
  }
  return found;
}
