import type { SpokenWord } from '../usecases/vocabulary.js';

/** Every character of a text (a code point, as ElevenLabs counts them) with when it is said. */
export interface CharacterAlignment {
  characters: string[];
  character_start_times_seconds: number[];
  character_end_times_seconds: number[];
}

const millis = (seconds: number) => Math.round(seconds * 1000) / 1000;

/**
 * Word times spread over characters: a word's time evenly over its characters, the gap between two words evenly
 * over the characters between them (spaces, punctuation), characters before the first word at its start and after
 * the last at its end. Times never go back, even where an engine's words overlap.
 */
export function characterAlignment(text: string, words: readonly Pick<SpokenWord, 'offset' | 'length' | 'start' | 'end'>[]): CharacterAlignment {
  const characters: string[] = [];
  const offsets: number[] = [];
  let offset = 0;
  for (const character of text) {
    characters.push(character);
    offsets.push(offset);
    offset += character.length;
  }
  const starts = new Array<number>(characters.length);
  const ends = new Array<number>(characters.length);
  // Characters [from, to) share [start, end).
  const spread = (from: number, to: number, start: number, end: number) => {
    const span = Math.max(0, end - start);
    for (let index = from; index < to; index += 1) {
      starts[index] = start + (span * (index - from)) / (to - from);
      ends[index] = start + (span * (index - from + 1)) / (to - from);
    }
  };
  const indexAt = (utf16: number) => {
    let low = 0;
    let high = offsets.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((offsets[middle] as number) < utf16) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const ordered = [...words].sort((a, b) => a.offset - b.offset);
  let next = 0;
  let time = ordered[0]?.start ?? 0;
  for (const word of ordered) {
    const from = Math.max(next, indexAt(word.offset));
    const to = Math.max(from, indexAt(word.offset + word.length));
    const start = Math.max(time, word.start);
    spread(next, from, time, start);
    const end = Math.max(start, word.end);
    spread(from, to, start, end);
    next = to;
    time = end;
  }
  spread(next, characters.length, time, time);
  return {
    characters,
    character_start_times_seconds: starts.map(millis),
    character_end_times_seconds: ends.map(millis),
  };
}

/**
 * The characters of a text being streamed, timed as its words come (`add`, in order) and handed out once each
 * (`take`): up to the end of the last word so far, and with `final` the rest. The times of characters already handed
 * out never change, since later words only time the characters after them.
 */
export class StreamedAlignment {
  private readonly words: Array<Pick<SpokenWord, 'offset' | 'length' | 'start' | 'end'>> = [];
  private text = '';
  private timedTo = 0;
  /** Where the characters handed out so far end, in code points and in UTF-16 units of the text. */
  private given = 0;
  private givenTo = 0;

  add(words: ReadonlyArray<Pick<SpokenWord, 'offset' | 'length' | 'start' | 'end'>>, text: string): void {
    this.words.push(...words);
    this.text = text;
    for (const word of words) this.timedTo = Math.max(this.timedTo, word.offset + word.length);
  }

  take(final = false): CharacterAlignment {
    const to = final ? this.text.length : this.timedTo;
    // Most calls (a line for every piece of encoded audio) come with no new word: nothing to align again.
    if (to <= this.givenTo) return { characters: [], character_start_times_seconds: [], character_end_times_seconds: [] };
    const all = characterAlignment(this.text.slice(0, to), this.words);
    const from = this.given;
    this.given = Math.max(from, all.characters.length);
    this.givenTo = to;
    return {
      characters: all.characters.slice(from),
      character_start_times_seconds: all.character_start_times_seconds.slice(from),
      character_end_times_seconds: all.character_end_times_seconds.slice(from),
    };
  }
}

/** A stretch of a dialogue said in one voice, as ElevenLabs' text-to-dialogue answers with its timestamps. */
export interface VoiceSegment {
  voice_id: string;
  start_time_seconds: number;
  end_time_seconds: number;
  /** [start, end) in the characters of the whole dialogue (code points, as `alignment` counts them). */
  character_start_index: number;
  character_end_index: number;
  dialogue_input_index: number;
}

/** The characters handed out by one `take`, and what is known of them since. */
export interface TimedPart {
  alignment: CharacterAlignment;
  normalized_alignment: CharacterAlignment;
}

/**
 * A dialogue's characters timed as they are streamed (StreamedAlignment), with the voice segments of each part handed
 * out: each turn's share of that part, its characters numbered in the whole dialogue. `spansOf` gives each turn's
 * [offset, end) in the written text (UTF-16), told once with the text.
 */
export class DialogueAlignment {
  private readonly characters = new StreamedAlignment();
  /** Characters handed out before the part being taken. */
  private given = 0;
  /** The turns' spans in code points of the written text, once it is known. */
  private spans: Array<{ from: number; to: number }> | undefined;

  constructor(
    private readonly voiceIds: readonly string[],
    private readonly spansOf: (written: string) => ReadonlyArray<{ offset: number; end: number }>,
  ) {}

  add(words: ReadonlyArray<Pick<SpokenWord, 'offset' | 'length' | 'start' | 'end'>>, text: string): void {
    const count = (end: number) => [...text.slice(0, end)].length;
    this.spans ??= this.spansOf(text).map((span) => ({ from: count(span.offset), to: count(span.end) }));
    this.characters.add(words, text);
  }

  take(final = false): TimedPart & { voice_segments: VoiceSegment[] } {
    const part = this.characters.take(final);
    const from = this.given;
    this.given += part.characters.length;
    // A turn's share of this part, timed by the part's own characters (at `index - from`).
    const voice_segments = (this.spans ?? []).flatMap((span, index): VoiceSegment[] => {
      const [first, end] = [Math.max(span.from, from), Math.min(span.to, this.given)];
      if (first >= end) return [];
      const voice_id = this.voiceIds[index] as string;
      const start_time_seconds = part.character_start_times_seconds[first - from] as number;
      const end_time_seconds = part.character_end_times_seconds[end - 1 - from] as number;
      return [{ voice_id, start_time_seconds, end_time_seconds, character_start_index: first, character_end_index: end, dialogue_input_index: index }];
    });
    return { alignment: part, normalized_alignment: part, voice_segments };
  }
}
