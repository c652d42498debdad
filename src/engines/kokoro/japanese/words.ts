// Which morphemes make one spoken word: misaki's `ja` joins the longest run of them whose written form is a word
// of its list (ja-words.txt, misaki 0.7.4's data/ja_words.txt, Apache-2.0: 147,571 words and their inflected
// forms, such as 住んで, います, 面白かった), so that the phoneme string has a space between words, not between
// a verb and its endings.
import { readFileSync } from 'node:fs';

const WORDS_FILE = new URL('./ja-words.txt', import.meta.url);

let words: ReadonlySet<string> | undefined;
let longest = 0;

/** The word list, read once per process (about 10 MB of heap). */
export function wordList(): ReadonlySet<string> {
  if (!words) {
    const list = readFileSync(WORDS_FILE, 'utf8').split('\n').map((line) => line.trim()).filter(Boolean);
    longest = list.reduce((max, word) => Math.max(max, word.length), 0);
    words = new Set(list);
  }
  return words;
}

/**
 * Misaki's grouping: from each morpheme on, the longest run whose surfaces joined are in the list makes one word
 * (a run is never longer than the list's longest word, so only those are tried); else the morpheme alone.
 * Returns the groups as [start, end) index ranges into `surfaces`.
 */
export function groupMorphemes(surfaces: readonly string[]): Array<[number, number]> {
  const list = wordList();
  const groups: Array<[number, number]> = [];
  for (let start = 0; start < surfaces.length; ) {
    let end = start + 1;
    let joined = '';
    for (let next = start; next < surfaces.length; next++) {
      joined += surfaces[next];
      if (joined.length > longest) break;
      if (list.has(joined)) end = next + 1;
    }
    groups.push([start, end]);
    start = end;
  }
  return groups;
}
