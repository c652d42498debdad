import type { Speech } from './speech.js';
import { spokenWeight, textTokens, type TextToken as Token } from './word-segments.js';
import { hasEmoji, isEmoji, silenceEmoji } from '../engines/emoji-text.js';

/** A word of the request text as spoken (see textTokens), with when it is said. */
export interface SpokenWord {
  /** The word as shown: control characters dropped; words merged into it joined by a space. */
  text: string;
  start: number;
  end: number;
  /** UTF-16 offset of the word in the request text. */
  offset: number;
  /** UTF-16 length in the request text, up to the end of the last token merged into it. */
  length: number;
  /** A line break in the request text comes before this word. */
  breakBefore: boolean;
  /** The word begins a sentence the engine spoke on its own. */
  sentenceStart: boolean;
  /** A space stands before it in the request text (false between words of a script written without spaces). */
  spaceBefore: boolean;
}

/**
 * Gives every token a start: the earliest engine word event inside it or, for sentences without word events (an
 * engine without them), a share of its sentence by spokenWeight. An engine word that covers several tokens of a script written without
 * spaces (eSpeak NG reads a Japanese sentence as one) shares its time among those without an event of their own.
 * Tokens no word event falls in (a lone dash) join the word before; so do tokens of emoji alone, never spoken,
 * whatever the engine: an emoji stays with the word it follows (or, at the start, the word after).
 */
export function timedWords(text: string, speech: Speech): SpokenWord[] {
  const tokens = textTokens(text);
  const silent = tokens.map((token) => isSilent(token.text));
  const starts = new Array<number | undefined>(tokens.length);
  const ends = new Array<number | undefined>(tokens.length);
  const tokenAt = (offset: number) => {
    let low = 0;
    let high = tokens.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((tokens[middle] as Token).offset <= offset) low = middle;
      else high = middle - 1;
    }
    return low;
  };
  /** The first token starting at or after `offset`. */
  const tokenFrom = (offset: number) => {
    const index = tokenAt(offset);
    return (tokens[index]?.offset ?? offset) >= offset ? index : index + 1;
  };
  const time = (index: number, start: number, end: number) => {
    starts[index] = Math.min(starts[index] ?? start, start);
    ends[index] = Math.max(ends[index] ?? end, end);
  };
  const spread = (indices: readonly number[], start: number, end: number) => {
    const weights = indices.map((index) => spokenWeight(tokens[index] as Token));
    const total = weights.reduce((sum, weight) => sum + weight, 0);
    let done = 0;
    indices.forEach((index, position) => {
      const from = start + ((end - start) * done) / total;
      done += weights[position] as number;
      time(index, from, start + ((end - start) * done) / total);
    });
  };
  if (speech.words.length > 0) {
    const owners = speech.words.map((word) => {
      const index = tokenAt(word.textOffset);
      const token = tokens[index];
      return token && !silent[index] && word.textOffset < token.offset + token.length ? index : undefined;
    });
    const owned = new Set(owners);
    speech.words.forEach((word, position) => {
      const owner = owners[position];
      if (owner === undefined) return;
      const covered = [owner];
      for (let index = owner + 1; index < tokens.length; index++) {
        const token = tokens[index] as Token;
        if (token.spaceBefore || token.offset >= word.textOffset + word.textLength || owned.has(index)) break;
        if (!silent[index]) covered.push(index);
      }
      spread(covered, word.start, word.end);
    });
  }
  // Sentences no word event fell in (an engine without them; a dialogue's turn in such a voice): a share each. Each
  // sentence's tokens found from the first at or after its offset (tokens are in text order: no scan of them all).
  for (const sentence of speech.sentences) {
    const end = sentence.textOffset + sentence.textLength;
    const inside: number[] = [];
    for (let index = tokenFrom(sentence.textOffset); index < tokens.length && (tokens[index] as Token).offset < end; index++) {
      if (!silent[index]) inside.push(index);
    }
    if (inside.every((index) => starts[index] === undefined)) spread(inside, sentence.start, sentence.end);
  }
  // A sentence's first token: the one at its offset, or after it (an SSML sentence's span starts at the space before it).
  const firstToken = (offset: number) => {
    const index = tokenAt(offset);
    const token = tokens[index];
    return token && token.offset + token.length <= offset ? index + 1 : index;
  };
  const sentenceOffsets = new Set(speech.sentences.map((sentence) => firstToken(sentence.textOffset)));

  const words: SpokenWord[] = [];
  let pendingPrefix: Token[] = [];
  let latest = 0;
  tokens.forEach((token, index) => {
    const start = starts[index];
    const last = words.at(-1);
    if (start === undefined) {
      if (last && !token.breakBefore && pendingPrefix.length === 0) extend(last, [token]);
      else pendingPrefix.push(token);
      return;
    }
    latest = Math.max(latest, start);
    const lead = pendingPrefix[0];
    words.push({
      text: joined([...pendingPrefix, token]),
      start: latest,
      end: Math.max(latest, ends[index] ?? latest),
      offset: lead?.offset ?? token.offset,
      length: token.offset + token.length - (lead?.offset ?? token.offset),
      breakBefore: (lead ?? token).breakBefore,
      sentenceStart: sentenceOffsets.has(index) || words.length === 0,
      spaceBefore: (lead ?? token).spaceBefore,
    });
    pendingPrefix = [];
  });
  const last = words.at(-1);
  if (last && pendingPrefix.length > 0) extend(last, pendingPrefix);
  return words;
}

/** Tokens as one word's text: a space where the request text has one. */
function joined(tokens: readonly Token[]): string {
  return tokens.map((token, index) => (index > 0 && token.spaceBefore ? ` ${token.text}` : token.text)).join('');
}

function extend(word: SpokenWord, tokens: readonly Token[]): void {
  const final = tokens.at(-1) as Token;
  word.text += ((tokens[0] as Token).spaceBefore ? ' ' : '') + joined(tokens);
  word.length = final.offset + final.length - word.offset;
}

/** Seconds of `speech` → seconds of a file of `fileDuration` made from it (scaled by the two lengths), to the millisecond. */
export function fileClock(speech: Pick<Speech, 'duration'>, fileDuration: number): (seconds: number) => number {
  const scale = speech.duration > 0 && Number.isFinite(fileDuration) ? fileDuration / speech.duration : 1;
  return (seconds) => Math.round(seconds * scale * 1000) / 1000;
}

/**
 * The words with their times in a file of `fileDuration` seconds made from `speech`: scaled by the ratio of the two
 * lengths, which takes in the playback speed and whatever the encoder adds; rounded to milliseconds.
 */
export function timedWordsIn(text: string, speech: Speech, fileDuration: number): SpokenWord[] {
  const at = fileClock(speech, fileDuration);
  const words = timedWords(text, speech);
  // Engines end a word's time before its last faint sound; the last word lasts until the sound does.
  const soundEnd = speech.sentences.at(-1)?.end ?? 0;
  return words.map((word, index) => {
    const end = index === words.length - 1 ? Math.max(word.end, soundEnd) : word.end;
    return { ...word, start: at(word.start), end: at(end) };
  });
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** A token of emoji with nothing to say beside them but marks ("🔥", "🔥!"): never timed, it joins a word. */
function isSilent(token: string): boolean {
  return hasEmoji(token) && !LETTER_OR_DIGIT.test(silenceEmoji(token));
}

/**
 * The span of a word that is spoken: without the tokens of emoji joined to it (isSilent), nor the emoji at its
 * ends, which captions show with the word but the voice never says; the whole word when it is nothing else.
 */
export function spokenSpan(text: string, word: Pick<SpokenWord, 'offset' | 'length'>): { offset: number; length: number } {
  const shown = text.slice(word.offset, word.offset + word.length);
  const said = textTokens(shown).filter((token) => !isSilent(token.text));
  const [first, last] = [said[0], said.at(-1)];
  if (!first || !last) return { offset: word.offset, length: word.length };
  const clusters = [...graphemes.segment(shown.slice(first.offset, last.offset + last.length))];
  const kept = (cluster: string) => !isEmoji(cluster) && /\S/u.test(cluster);
  const from = clusters.find(({ segment }) => kept(segment));
  const to = clusters.findLast(({ segment }) => kept(segment));
  if (!from || !to) return { offset: word.offset, length: word.length };
  return { offset: word.offset + first.offset + from.index, length: to.index + to.segment.length - from.index };
}
