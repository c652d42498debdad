// pyopenjtalk-plus's own corrections of Open JTalk's readings (0.4.1.post10, the one the reference runs on), those
// that change a pronunciation and need no data beyond a short list: before the numerals are read
// (apply_original_rule_before_chaining: 不足 after a noun ブソク, the 分 of a fraction ブン, 〇〇 マル, 球 after a
// native word ダマ) and after (suppress_unnatural_auxiliary_u_long_vowel, restore_loanword_kana). Its larger ones
// (readings chosen by context from long lists, kanji the dictionary lacks read from Unihan, 々 expanded, 何 guessed
// by a model) are not ported: fixtures/kokoro-japanese-phonemes.json lists what that changes.
import type { NjdNode } from './njd.js';

const KANJI = /[\u4e00-\u9fff]/u;
const HIRAGANA = /[\u3041-\u3096]/u;

/** apply_original_rule_before_chaining's pronunciation rules, before njd_set_digit. */
export function beforeNumerals(nodes: NjdNode[]): NjdNode[] {
  for (let i = 0; i + 1 < nodes.length; i++) {
    const node = nodes[i] as NjdNode;
    const next = nodes[i + 1] as NjdNode;
    const afterNext = nodes[i + 2];
    if (node.pos === '名詞' && next.string === '不足' && next.pron === 'フソク') next.read = next.pron = 'ブソク';
    // The 分 of a fraction (三分の一) ブン, not the フン of minutes or the ブ of a share.
    const denominator = next.string === 'の' && afterNext?.posGroup1 === '数';
    if (denominator && node.string.endsWith('分')) {
      if (node.pron.endsWith('フン') || node.pron.endsWith('プン')) {
        node.read = `${node.read.slice(0, -2)}ブン`;
        node.pron = `${node.pron.slice(0, -2)}ブン`;
      } else if (node.pron.endsWith('ブ')) {
        node.read += 'ン';
        node.pron += 'ン';
      }
    }
    if (i > 0 && denominator && node.string === '分' && nodes[i - 1]?.posGroup1 === '数') node.read = node.pron = 'ブン';
    // 〇〇 is a blanked-out word, not a number.
    if (node.string === '〇' && next.string === '〇') {
      for (const blank of [node, next]) {
        blank.posGroup1 = '一般';
        blank.read = blank.pron = 'マル';
        blank.moraSize = 2;
      }
    }
    if (next.string === '球' && next.pos === '名詞' && next.posGroup1 === '接尾' && next.pron === 'キュー' && KANJI.test(node.string) && HIRAGANA.test(node.string)) {
      next.read = next.pron = 'ダマ';
      next.moraSize = 2;
    }
  }
  return nodes;
}

/** Kana whose vowel is a, i or e (_DAN_MAP): an auxiliary う after them is not a long vowel. */
const A_I_E_ROWS = new Set('アカサタナハマヤラワガザダバパァイキシチニヒミリギジヂビピィエケセテネヘメレゲゼデベペェ');

/** Loan-word spellings the dictionary replaced by common kana, longest first (restore_loanword_kana). */
const LOANWORD_KANA: ReadonlyArray<readonly [string, string]> = [
  ['ヴャ', 'ビャ'], ['ヴュ', 'ビュ'], ['ヴョ', 'ビョ'], ['ヴァ', 'バ'], ['ヴィ', 'ビ'], ['ヴェ', 'ベ'], ['ヴォ', 'ボ'], ['ヴ', 'ブ'],
  ['スィ', 'シ'], ['ズィ', 'ジ'], ['テュ', 'チュ'], ['デュ', 'ヂュ'], ['イェ', 'イエ'], ['シィ', 'シー'], ['リェ', 'リエ'],
  ['ニェ', 'ニエ'], ['ヒェ', 'ヒエ'], ['ミェ', 'ミエ'], ['ビェ', 'ビエ'], ['ピェ', 'ピエ'], ['キェ', 'ケ'], ['ギェ', 'ゲ'],
  ['グゥ', 'グウ'], ['クゥ', 'クウ'],
];

const isKatakanaWord = (text: string): boolean => /^[ァ-ヴーヽヾ]+$/u.test(text);

/** The pronunciation `pronunciation` of the katakana word `surface` with its loan-word spellings back, or undefined. */
function restoredSpelling(surface: string, pronunciation: string): string | undefined {
  let restored = '';
  let at = 0;
  let changed = false;
  for (let from = 0; from < surface.length; ) {
    // The mark of an unvoiced vowel (’) is not written: carried over as it is.
    if (pronunciation.startsWith('’', at)) {
      restored += '’';
      at += 1;
      continue;
    }
    const restoration = LOANWORD_KANA.find(([original, common]) => surface.startsWith(original, from) && pronunciation.startsWith(common, at));
    if (restoration) {
      restored += restoration[0];
      from += restoration[0].length;
      at += restoration[1].length;
      changed = true;
      continue;
    }
    const char = surface[from] ?? '';
    // A long vowel the dictionary wrote ー where the spelling has イ or ウ (ウェイヴ ウェーブ) stays long.
    if ((char === 'イ' || char === 'ウ') && pronunciation.startsWith('ー', at)) {
      restored += 'ー';
    } else if (pronunciation.startsWith(char, at)) {
      restored += char;
    } else {
      return undefined;
    }
    from += 1;
    at += 1;
  }
  if (pronunciation.startsWith('’', at)) {
    restored += '’';
    at += 1;
  }
  return at === pronunciation.length && changed ? restored : undefined;
}

/** pyopenjtalk-plus's corrections after the numerals are read. */
export function afterNumerals(nodes: NjdNode[]): NjdNode[] {
  for (let i = 0; i + 1 < nodes.length; i++) {
    const node = nodes[i] as NjdNode;
    const next = nodes[i + 1] as NjdNode;
    if (next.pron === 'ー' && next.read === 'ウ' && A_I_E_ROWS.has(node.pron.replace(/’+$/u, '').slice(-1))) next.pron = 'ウ';
  }
  for (const node of nodes) {
    if (!isKatakanaWord(node.string)) continue;
    const read = restoredSpelling(node.string, node.read);
    if (read !== undefined) node.read = read;
    const pron = restoredSpelling(node.string, node.pron);
    if (pron !== undefined) node.pron = pron;
  }
  return nodes;
}
