/** One text word and the phonemes spoken for it: offsets into the input text and into `KokoroPhonemized.phonemes`. */
export interface KokoroPhonemeWord {
  textOffset: number;
  textLength: number;
  /** First phoneme of the word (a UTF-16 index into `phonemes`). */
  phonemeStart: number;
  /** One past its last phoneme. */
  phonemeEnd: number;
}

/** Text as Kokoro's phoneme set (one vocabulary symbol per UTF-16 code unit), with where each word's phonemes are. */
export interface KokoroPhonemized {
  phonemes: string;
  /** In text order, not overlapping; punctuation and spaces between words belong to none. */
  words: KokoroPhonemeWord[];
}
