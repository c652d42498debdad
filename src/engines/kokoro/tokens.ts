// Kokoro's phonemes → token ids, one inference's worth at a time: the vocabulary of the model's config (vocab.json
// beside this file), at most PACK_ROWS tokens an inference (the model's and its packs' limit), each sentence its own.
import { readFileSync } from 'node:fs';
import { PACK_ROWS } from './packs.js';

/** vocab.json: `{ source, vocab: { symbol: id } }`; 0, the pad, is no symbol's. */
const VOCAB: Readonly<Record<string, number>> = (JSON.parse(readFileSync(new URL('./vocab.json', import.meta.url), 'utf8')) as { vocab: Record<string, number> }).vocab;

export function tokenOf(symbol: string): number | undefined {
  return Object.hasOwn(VOCAB, symbol) ? VOCAB[symbol] : undefined;
}

/** One inference: phonemes [from, to) of the text's, their ids, and for each phoneme of the span its token's index (-1: none). */
export interface TokenRun {
  from: number;
  to: number;
  ids: number[];
  tokenAt: number[];
}

const SENTENCE_ENDS = new Set(['.', '!', '?', '…', '。', '！', '？']);
const CLAUSE_ENDS = new Set([',', ';', ':', '—', '、', '，']);

/** Symbols outside the vocabulary are left out, as kokoro-onnx and kokoro-js leave them. */
function tokenize(phonemes: string, from: number, to: number): TokenRun {
  const ids: number[] = [];
  const tokenAt: number[] = [];
  for (let at = from; at < to; at++) {
    const id = tokenOf(phonemes[at] as string);
    tokenAt.push(id === undefined ? -1 : ids.length);
    if (id !== undefined) ids.push(id);
  }
  return { from, to, ids, tokenAt };
}

/** Where a piece starting at `from` that would run past `limit` should end: after a clause's mark, else between words, else at `limit`. */
function cutBefore(phonemes: string, from: number, limit: number): number {
  let wordGap = -1;
  for (let end = limit; end > from + 1; end--) {
    if (phonemes[end - 1] !== ' ') continue;
    if (CLAUSE_ENDS.has(phonemes[end - 2] ?? '') || SENTENCE_ENDS.has(phonemes[end - 2] ?? '')) return end;
    if (wordGap === -1) wordGap = end;
  }
  return wordGap === -1 ? limit : wordGap;
}

/** The end of the sentence that starts at `from`: after its final mark and the space that follows, or the text's end. */
function sentenceEnd(phonemes: string, from: number): number {
  for (let at = from; at < phonemes.length - 1; at++) {
    if (SENTENCE_ENDS.has(phonemes[at] as string) && phonemes[at + 1] === ' ') return at + 2;
  }
  return phonemes.length;
}

/** Without the spaces at its ends, which say nothing. */
function trimmed(phonemes: string, from: number, to: number): [number, number] {
  let start = from;
  let end = to;
  while (start < end && phonemes[start] === ' ') start++;
  while (end > start && phonemes[end - 1] === ' ') end--;
  return [start, end];
}

/** The phonemes as inferences: one a sentence, a sentence longer than `maxTokens` cut where a speaker would pause. */
export function tokenRuns(phonemes: string, maxTokens = PACK_ROWS): TokenRun[] {
  const runs: TokenRun[] = [];
  let from = 0;
  while (from < phonemes.length) {
    const end = sentenceEnd(phonemes, from);
    let to = end;
    let counted = 0;
    for (let at = from; at < end; at++) {
      if (tokenOf(phonemes[at] as string) === undefined) continue;
      if (++counted > maxTokens) {
        to = cutBefore(phonemes, from, at);
        break;
      }
    }
    const [start, stop] = trimmed(phonemes, from, to);
    const run = tokenize(phonemes, start, stop);
    if (run.ids.length > 0) runs.push(run);
    from = to;
  }
  return runs;
}
