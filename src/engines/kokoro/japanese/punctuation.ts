// The phoneme string of a text from its words' phonemes, spaced as misaki's `ja` spaces them (its
// _romaji_tokens and JAG2P.__call__): a space after each word, none before closing punctuation or after an
// opening quote, one space for a run of them, none around a glottal stop ʔ inside a phrase (iʔ pai → iʔpai),
// parentheses as « ». Each phoneme remembers which word it came from, for the word spans.

/** A word's (or a punctuation mark's) phonemes in text order. */
export interface PhonemeToken {
  /** The written form (misaki tells punctuation by it). */
  surface: string;
  phonemes: string;
  /** The spoken word it belongs to (an index of the caller's), or -1 for punctuation and what is not read. */
  owner: number;
}

export interface JoinedPhonemes {
  phonemes: string;
  /** For each UTF-16 unit of `phonemes`, its token's owner (-1 for spaces and punctuation). */
  owners: Int32Array;
}

const OPENING = '「『«';
const OPENING_PHONEMES = '([';
const CLOSING = '」』»';
const CLOSING_PHONEMES = ']).,?!:';
// A space before ʔ unless punctuation precedes it, a space after ʔ unless a quote follows it.
const SPACE_AROUND_GLOTTAL_STOP = /(?<![!",.:;?»—…”]) (?=ʔ)|(?<=ʔ) (?!["«“])/gu;

/** Whether a space follows each token: misaki's rules, by Python's `in` (a substring test: the empty string is in every string). */
function spacesAfter(tokens: readonly PhonemeToken[]): boolean[] {
  const spaces: boolean[] = [];
  tokens.forEach((token, i) => {
    if (OPENING.includes(token.surface) || OPENING_PHONEMES.includes(token.phonemes)) {
      if (i > 0) spaces[i - 1] = true;
      spaces.push(false);
    } else if (CLOSING.includes(token.surface) || CLOSING_PHONEMES.includes(token.phonemes)) {
      if (i > 0) spaces[i - 1] = false;
      spaces.push(true);
    } else {
      spaces.push(token.phonemes !== ' ');
    }
  });
  return spaces;
}

/** The tokens' phonemes as one string, spaced and cleaned as misaki does, with the owner of each unit. */
export function joinTokens(tokens: readonly PhonemeToken[]): JoinedPhonemes {
  const spaces = spacesAfter(tokens);
  const chars: string[] = [];
  const owners: number[] = [];
  tokens.forEach((token, i) => {
    // A sokuon left over (one misaki could not place) is dropped. UTF-16 units, as the offsets are.
    for (const char of token.phonemes.replaceAll('っ', '').split('')) {
      chars.push(char);
      owners.push(token.owner);
    }
    if (spaces[i]) {
      chars.push(' ');
      owners.push(-1);
    }
  });
  // Python's strip() and re.sub(r'\s+', ' '): runs of white space made one space, none at either end.
  const keptChars: string[] = [];
  const keptOwners: number[] = [];
  chars.forEach((char, i) => {
    if (/\s/u.test(char)) {
      if (keptChars.length > 0 && keptChars[keptChars.length - 1] !== ' ') {
        keptChars.push(' ');
        keptOwners.push(-1);
      }
      return;
    }
    keptChars.push(char === '(' ? '«' : char === ')' ? '»' : char);
    keptOwners.push(owners[i] ?? -1);
  });
  if (keptChars[keptChars.length - 1] === ' ') {
    keptChars.pop();
    keptOwners.pop();
  }
  const spaced = keptChars.join('');
  const dropped = new Set<number>();
  for (const match of spaced.matchAll(SPACE_AROUND_GLOTTAL_STOP)) dropped.add(match.index);
  let phonemes = '';
  const kept: number[] = [];
  keptChars.forEach((char, i) => {
    if (dropped.has(i)) return;
    phonemes += char;
    kept.push(keptOwners[i] ?? -1);
  });
  return { phonemes, owners: Int32Array.from(kept) };
}
