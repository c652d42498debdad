// Kana to Kokoro's phonemes: misaki's `ja` romanizer (misaki 0.7.4's ja.py, Apache-2.0, after polm's cutlet), whose
// table and rules the Japanese voice packs were trained on: each kana by its neighbours (a kana and the small one
// after it make one sound, ん takes the place of what follows, っ a glottal stop, ー a length mark).

/** Misaki's HEPBURN: each kana's phonemes, then the pairs that read as one sound, then punctuation. */
const TABLE: ReadonlyMap<string, string> = new Map(
  Object.entries({
    'ぁ': 'a', 'あ': 'a', 'ぃ': 'i', 'い': 'i', 'ぅ': 'ɯ', 'う': 'ɯ', 'ぇ': 'e', 'え': 'e', 'ぉ': 'o', 'お': 'o',
    'か': 'ka', 'が': 'ɡa', 'き': 'kʲi', 'ぎ': 'ɡʲi', 'く': 'kɯ', 'ぐ': 'ɡɯ', 'け': 'ke', 'げ': 'ɡe', 'こ': 'ko', 'ご': 'ɡo',
    'さ': 'sa', 'ざ': 'ʣa', 'し': 'ɕi', 'じ': 'ʥi', 'す': 'sɨ', 'ず': 'zɨ', 'せ': 'se', 'ぜ': 'ʣe', 'そ': 'so', 'ぞ': 'ʣo',
    'た': 'ta', 'だ': 'da', 'ち': 'ʨi', 'ぢ': 'ʥi', 'つ': 'ʦɨ', 'づ': 'zɨ', 'て': 'te', 'で': 'de', 'と': 'to', 'ど': 'do',
    'な': 'na', 'に': 'ɲi', 'ぬ': 'nɯ', 'ね': 'ne', 'の': 'no', 'は': 'ha', 'ば': 'ba', 'ぱ': 'pa', 'ひ': 'çi', 'び': 'bʲi',
    'ぴ': 'pʲi', 'ふ': 'ɸɯ', 'ぶ': 'bɯ', 'ぷ': 'pɯ', 'へ': 'he', 'べ': 'be', 'ぺ': 'pe', 'ほ': 'ho', 'ぼ': 'bo', 'ぽ': 'po',
    'ま': 'ma', 'み': 'mʲi', 'む': 'mɯ', 'め': 'me', 'も': 'mo', 'ゃ': 'ja', 'や': 'ja', 'ゅ': 'jɯ', 'ゆ': 'jɯ', 'ょ': 'jo',
    'よ': 'jo', 'ら': 'ɾa', 'り': 'ɾʲi', 'る': 'ɾɯ', 'れ': 'ɾe', 'ろ': 'ɾo', 'ゎ': 'βa', 'わ': 'βa', 'ゐ': 'i', 'ゑ': 'e',
    'を': 'o', 'ゔ': 'vɯ', 'ゕ': 'ka', 'ゖ': 'ke', 'ヷ': 'va', 'ヸ': 'vʲi', 'ヹ': 've', 'ヺ': 'vo',
    'いぇ': 'je', 'うぃ': 'βi', 'うぇ': 'βe', 'うぉ': 'βo', 'きぇ': 'kʲe', 'きゃ': 'kʲa', 'きゅ': 'kʲɨ', 'きょ': 'kʲo',
    'ぎゃ': 'ɡʲa', 'ぎゅ': 'ɡʲɨ', 'ぎょ': 'ɡʲo', 'くぁ': 'kᵝa', 'くぃ': 'kᵝi', 'くぇ': 'kᵝe', 'くぉ': 'kᵝo', 'ぐぁ': 'ɡᵝa',
    'ぐぃ': 'ɡᵝi', 'ぐぇ': 'ɡᵝe', 'ぐぉ': 'ɡᵝo', 'しぇ': 'ɕe', 'しゃ': 'ɕa', 'しゅ': 'ɕɨ', 'しょ': 'ɕo', 'じぇ': 'ʥe',
    'じゃ': 'ʥa', 'じゅ': 'ʥɨ', 'じょ': 'ʥo', 'ちぇ': 'ʨe', 'ちゃ': 'ʨa', 'ちゅ': 'ʨɨ', 'ちょ': 'ʨo', 'ぢゃ': 'ʥa',
    'ぢゅ': 'ʥɨ', 'ぢょ': 'ʥo', 'つぁ': 'ʦa', 'つぃ': 'ʦʲi', 'つぇ': 'ʦe', 'つぉ': 'ʦo', 'てぃ': 'tʲi', 'てゅ': 'tʲɨ',
    'でぃ': 'dʲi', 'でゅ': 'dʲɨ', 'とぅ': 'tɯ', 'どぅ': 'dɯ', 'にぇ': 'ɲe', 'にゃ': 'ɲa', 'にゅ': 'ɲɨ', 'にょ': 'ɲo',
    'ひぇ': 'çe', 'ひゃ': 'ça', 'ひゅ': 'çɨ', 'ひょ': 'ço', 'びゃ': 'bʲa', 'びゅ': 'bʲɨ', 'びょ': 'bʲo', 'ぴゃ': 'pʲa',
    'ぴゅ': 'pʲɨ', 'ぴょ': 'pʲo', 'ふぁ': 'ɸa', 'ふぃ': 'ɸʲi', 'ふぇ': 'ɸe', 'ふぉ': 'ɸo', 'ふゅ': 'ɸʲɨ', 'ふょ': 'ɸʲo',
    'みゃ': 'mʲa', 'みゅ': 'mʲɨ', 'みょ': 'mʲo', 'りゃ': 'ɾʲa', 'りゅ': 'ɾʲɨ', 'りょ': 'ɾʲo', 'ゔぁ': 'va', 'ゔぃ': 'vʲi',
    'ゔぇ': 've', 'ゔぉ': 'vo', 'ゔゅ': 'bʲɨ', 'ゔょ': 'bʲo',
    '。': '.', '、': ',', '？': '?', '！': '!', '「': '“', '」': '”', '『': '“', '』': '”',
    '：': ':', '；': ';', '（': '(', '）': ')', '《': '(', '》': ')', '【': '[', '】': ']',
    '，': ',', '～': '—', '〜': '—', '—': '—', '«': '“', '»': '”',
    '・': ' ', '\u309a': '', '\u3099': '',
  }),
);

const SMALL = new Set('ゃゅょぁぃぅぇぉ');
const REPEAT_MARKS = new Set('〃々ゝゞヽ');
const UNVOICED = 'かきくけこさしすせそたちつてとはひふへほ';
const VOICED = 'がぎぐげござじずぜぞだぢづでどばびぶべぼ';

/** jaconv's kata2hira: full-width katakana as hiragana (ヷ to ヺ have none and stay). */
export function katakanaToHiragana(text: string): string {
  return text.replace(/[\u30a1-\u30f6\u30fd\u30fe]/gu, (char) => String.fromCharCode(char.charCodeAt(0) - 0x60));
}

/** A symbol's phonemes (punctuation), or undefined. */
export function symbolPhonemes(char: string): string | undefined {
  return TABLE.get(char);
}

/** What ん becomes before the sound `next` stands for. */
function moraicNasal(next: string | undefined): string {
  const following = next === undefined ? undefined : TABLE.get(next);
  if (following) {
    const first = following[0] ?? '';
    if ('mpb'.includes(first)) return 'm';
    if ('kɡ'.includes(first)) return 'ŋ';
    if (['ɲ', 'ʨ', 'ʥ'].some((prefix) => following.startsWith(prefix))) return 'ɲ';
    if ('ntdɾz'.includes(first)) return 'n';
  }
  return 'ɴ';
}

/** Misaki's _get_single_mapping: the phonemes of kana `kana` between `previous` and `next`. */
function kanaPhonemes(previous: string | undefined, kana: string, next: string | undefined): string {
  if (REPEAT_MARKS.has(kana)) {
    // ゝ repeats the kana before it (as the kana itself: misaki's own slip, kept), ゞ voiced; 々 and 〃 cannot be read.
    if (kana === 'ゝ' || kana === 'ヽ') return previous ?? '';
    if (kana === 'ゞ') {
      const at = previous === undefined ? -1 : UNVOICED.indexOf(previous);
      return at < 0 ? '' : (TABLE.get(VOICED[at] ?? '') ?? '');
    }
    return '';
  }
  if (previous !== undefined && TABLE.get(previous + kana) !== undefined) return TABLE.get(previous + kana) ?? '';
  if (next !== undefined && TABLE.get(kana + next) !== undefined) return '';
  if (next !== undefined && SMALL.has(next)) {
    if (kana === 'っ') return '';
    // Misaki fails here on a kana it has no entry for (ん, ー before a small kana); read as nothing instead.
    return (TABLE.get(kana) ?? '').slice(0, -1) + (TABLE.get(next) ?? '');
  }
  if (SMALL.has(kana)) return '';
  if (kana === 'ー') return 'ː';
  if (kana === 'っ') return 'ʔ';
  if (kana === 'ん') return moraicNasal(next);
  return TABLE.get(kana) ?? '';
}

/** Misaki's _romaji_word for a word read `hiragana`. */
export function wordPhonemes(hiragana: string): string {
  const kana = [...hiragana];
  let out = '';
  for (let i = 0; i < kana.length; i++) out += kanaPhonemes(kana[i - 1], kana[i] ?? '', kana[i + 1]);
  return out;
}
