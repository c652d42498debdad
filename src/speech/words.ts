import type { Speech } from './speech.js';

/** A word of the request text as spoken: what stands between two spaces, with when it is said. */
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
}

interface Token {
  text: string;
  offset: number;
  /** Length in the request text, control characters included. */
  length: number;
  breakBefore: boolean;
}

const LINE_BREAK = /[\n\v\f\r\u0085\u2028\u2029]/;

/** Runs of non-space characters, with control characters dropped (they draw nothing and would break the ASS line). */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let gapStart = 0;
  for (const match of text.matchAll(/\S+/gu)) {
    const shown = match[0].replace(/\p{Cc}/gu, '');
    if (shown) tokens.push({ text: shown, offset: match.index, length: match[0].length, breakBefore: tokens.length > 0 && LINE_BREAK.test(text.slice(gapStart, match.index)) });
    gapStart = match.index + match[0].length;
  }
  return tokens;
}

/**
 * Gives every token a start: the earliest engine word event inside it or, for engines without word events,
 * a share of its sentence proportional to its length. Tokens no word event falls in (a lone dash) join the word before.
 */
export function timedWords(text: string, speech: Speech): SpokenWord[] {
  const tokens = tokenize(text);
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
  const time = (index: number, start: number, end: number) => {
    starts[index] = Math.min(starts[index] ?? start, start);
    ends[index] = Math.max(ends[index] ?? end, end);
  };
  if (speech.words.length > 0) {
    for (const word of speech.words) {
      const index = tokenAt(word.textOffset);
      const token = tokens[index];
      if (token && word.textOffset < token.offset + token.length) time(index, word.start, word.end);
    }
  } else {
    for (const sentence of speech.sentences) {
      const inside = tokens.flatMap((token, index) =>
        token.offset >= sentence.textOffset && token.offset < sentence.textOffset + sentence.textLength ? [index] : [],
      );
      const weights = inside.map((index) => (tokens[index] as Token).text.length + 1);
      const total = weights.reduce((sum, weight) => sum + weight, 0);
      let done = 0;
      inside.forEach((index, position) => {
        const from = sentence.start + ((sentence.end - sentence.start) * done) / total;
        done += weights[position] as number;
        time(index, from, sentence.start + ((sentence.end - sentence.start) * done) / total);
      });
    }
  }
  const sentenceOffsets = new Set(speech.sentences.map((sentence) => tokenAt(sentence.textOffset)));

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
      text: [...pendingPrefix, token].map((part) => part.text).join(' '),
      start: latest,
      end: Math.max(latest, ends[index] ?? latest),
      offset: lead?.offset ?? token.offset,
      length: token.offset + token.length - (lead?.offset ?? token.offset),
      breakBefore: (lead ?? token).breakBefore,
      sentenceStart: sentenceOffsets.has(index) || words.length === 0,
    });
    pendingPrefix = [];
  });
  const last = words.at(-1);
  if (last && pendingPrefix.length > 0) extend(last, pendingPrefix);
  return words;
}

function extend(word: SpokenWord, tokens: readonly Token[]): void {
  const final = tokens.at(-1) as Token;
  word.text += ` ${tokens.map((token) => token.text).join(' ')}`;
  word.length = final.offset + final.length - word.offset;
}

/**
 * The words with their times in a file of `fileDuration` seconds made from `speech`: scaled by the ratio of the two
 * lengths, which takes in the playback speed and whatever the encoder adds; rounded to milliseconds.
 */
export function timedWordsIn(text: string, speech: Speech, fileDuration: number): SpokenWord[] {
  const scale = speech.duration > 0 && Number.isFinite(fileDuration) ? fileDuration / speech.duration : 1;
  const at = (seconds: number) => Math.round(seconds * scale * 1000) / 1000;
  const words = timedWords(text, speech);
  // Engines end a word's time before its last faint sound; the last word lasts until the sound does.
  const soundEnd = speech.sentences.at(-1)?.end ?? 0;
  return words.map((word, index) => {
    const end = index === words.length - 1 ? Math.max(word.end, soundEnd) : word.end;
    return { ...word, start: at(word.start), end: at(end) };
  });
}
