// Open JTalk's reading of numerals (njd_set_digit, Open JTalk 1.11 as pyopenjtalk-plus builds it): numerals the
// dictionary tags 数 (kanji 一 二 三, and the kana misaki writes digits as, いち に さん) read as numbers or digit by
// digit, and with a counter after them as Japanese says them together: 一個 イッコ, 三本 サンボン, 四年 ヨネン,
// 一日 after a month ツイタチ, 二十日 ハツカ, 一人 ヒトリ. Ported rule for rule; the accent and phrase marks it also
// sets are left out (Kokoro's phonemes carry none).
import { type NjdNode, loadFeature } from './njd.js';

const KAZU = '数';
const JOSUUSHI = '助数詞';
const FUKUSHIKANOU = '副詞可能';

/** Each numeral Open JTalk reads, its value and the kanji it writes it as (the first entry for a string counts). */
const NUMERALS: ReadonlyArray<readonly [string, number, string]> = [
  ['○', 0, '〇'], ['１', 1, '一'], ['２', 2, '二'], ['３', 3, '三'], ['４', 4, '四'], ['５', 5, '五'], ['６', 6, '六'],
  ['７', 7, '七'], ['８', 8, '八'], ['９', 9, '九'], ['一', 1, '一'], ['二', 2, '二'], ['三', 3, '三'], ['四', 4, '四'],
  ['五', 5, '五'], ['六', 6, '六'], ['七', 7, '七'], ['八', 8, '八'], ['九', 9, '九'], ['いち', 1, '一'], ['に', 2, '二'],
  ['さん', 3, '三'], ['よん', 4, '四'], ['ご', 5, '五'], ['ろく', 6, '六'], ['なな', 7, '七'], ['はち', 8, '八'],
  ['きゅう', 9, '九'], ['〇', 0, '〇'], ['０', 0, '０'], ['壱', 1, '一'], ['弐', 2, '二'], ['貳', 2, '二'], ['ニ', 2, '二'],
  ['参', 3, '三'], ['し', 4, '四'], ['しち', 7, '七'], ['く', 9, '九'],
];
/** The places within four digits (十 百 千) and of each four (万 億 兆 ...), as dictionary features. */
const PLACES = ['十,名詞,数,*,*,*,*,十,ジュウ,ジュー,1/2,*', '百,名詞,数,*,*,*,*,百,ヒャク,ヒャク,2/2,*', '千,名詞,数,*,*,*,*,千,セン,セン,1/2,*'];
const GROUPS = [
  '万,名詞,数,*,*,*,*,万,マン,マン,1/2,*', '億,名詞,数,*,*,*,*,億,オク,オク,1/2,*', '兆,名詞,数,*,*,*,*,兆,チョウ,チョー,1/2,C3',
  '京,名詞,数,*,*,*,*,京,ケイ,ケー,1/2,*', '垓,名詞,数,*,*,*,*,垓,ガイ,ガイ,1/2,*', '𥝱,名詞,数,*,*,*,*,𥝱,ジョ,ジョ,1/1,*',
  '穣,名詞,数,*,*,*,*,穣,ジョウ,ジョー,1/2,*', '溝,名詞,数,*,*,*,*,溝,コウ,コウ,1/2,*', '澗,名詞,数,*,*,*,*,澗,カン,カン,1/2,*',
  '正,名詞,数,*,*,*,*,正,セイ,セー,1/2,*', '載,名詞,数,*,*,*,*,載,サイ,サイ,1/2,*', '極,名詞,数,*,*,*,*,極,ゴク,ゴク,1/2,*',
  '恒河沙,名詞,数,*,*,*,*,恒河沙,ゴウガシャ,ゴウガシャ,1/4,*', '阿僧祇,名詞,数,*,*,*,*,阿僧祇,アソウギ,アソーギ,2/4,*',
  '那由他,名詞,数,*,*,*,*,那由他,ナユタ,ナユタ,1/3,*', '不可思議,名詞,数,*,*,*,*,不可思議,フカシギ,フカシギ,2/4,*',
  '無量大数,名詞,数,*,*,*,*,無量大数,ムリョウタイスウ,ムリョータイスー,6/7,*',
];

const words = (list: string): ReadonlySet<string> => new Set(list.split(' '));
type Table = Readonly<Record<string, string>>;

/** Counters (numerative classes) and how the numeral before each is then read: the first class that has it counts. */
const NUMERAL_BEFORE_COUNTER: ReadonlyArray<readonly [ReadonlySet<string>, Table]> = [
  [words('年 円 年間 年生 年代 年度 年版 年余 年来 えん'), { 四: 'ヨ' }],
  [words('人 人月 人前 人組'), { 四: 'ヨ', 七: 'シチ' }],
  [words('時 時間 時限 時半'), { 四: 'ヨ', 七: 'シチ', 九: 'ク' }],
  [words('日 日間'), { 七: 'シチ', 九: 'ク' }],
  [words('月'), { 四: 'シ', 七: 'シチ', 九: 'ク' }],
  [
    words(
      '個 階 分 発 本 鉢 口 切れ 箱 か月 か国 か所 か条 か村 か年 カ月 カ国 カ寺 カ所 カ条 カ村 カ店 カ年 ケ月 ケ国 ケ所 ケ条 ケ村 ' +
        'ケ年 ヵ月 ヵ国 ヵ所 ヵ条 ヵ村 ヵ年 ヶ月 ヶ国 ヶ所 ヶ条 ヶ村 ヶ年 個月 個口 個国 個条 個年 箇月 箇国 箇所 箇条 箇年 かけ くだり ' +
        'けた 価 課 画 回 回忌 回生 回戦 回線 回分 海里 カイリ 浬 角 株 冠 巻 缶 貫 貫目 間 基 期 期生 機 気圧 季 騎 客 脚 球 級 橋 局 ' +
        '曲 極 重ね 斤 金 句 区 躯 計 桁 ケタ 校 港 項 組 件 軒 言 戸 湖 光年 石 ぴき ぺん 波 派 敗 杯 拍 泊 版 犯 班 匹 疋 筆 俵 票 品 分間 ' +
        '分目 片 篇 編 辺 遍 歩 報 方 法 本立て 頭身',
    ),
    { 一: 'イッ', 六: 'ロッ', 八: 'ハッ', 十: 'ジュッ', 百: 'ヒャッ' },
  ],
  [
    words(
      '． ・ 才 頭 着 足 尺 坪 通り センチ シーシー ＣＣ ｃｃ ｃｍ サイクル サンチーム シーズン シート シリング シンガポールドル ' +
        'スイスフラン スウェーデンクローネ スクレ セット セント ソル ゾーン 糎 竿 差 差し 歳 歳児 作 冊 刷 皿 棹 艘 子 視 式 失 室 射 社 ' +
        '勺 種 首 周 周忌 周年 州 週 週間 集 宿 所 勝 升 床 章 色 食 親等 進 進数 品 すじ そう そろい 筋 数 寸 世 隻 席 石 節 戦 線 選 ' +
        '銭 層 相 揃 たび つかみ つがい つぶ つまみ つ折 つ折り とおり とき ところ とせ 玉 月 手 束 続き 体 対 卓 樽 反 丁 丁目 鳥 通 ' +
        '掴み 艇 滴 店 転 点 斗 棟 盗 灯 等 等席 等地 等分 答 得 噸 粒 種類 歳馬 世紀 車種',
    ),
    { 一: 'イッ', 八: 'ハッ', 十: 'ジュッ' },
  ],
  [
    words(
      'キロ カロリー ｃａｌ ｋｂ ｋｇ ｋｌ ｋｍ ｋｔ ｋｗ ｋグラム ｋバイト ｋヘルツ ｋメートル ｋリットル ｋワット カナダドル カラット ' +
        'ガロン キュリー キロカロリー キログラム キロトン キロバイト キロヘルツ キロメートル キロリットル キロワット キロワット時 クラス ' +
        'クローナ クローネ グァラニ ケース コース 粁',
    ),
    { 六: 'ロッ', 十: 'ジュッ', 百: 'ヒャッ' },
  ],
  [words('トン ｔ タル テラ トライ'), { 一: 'イッ', 十: 'ジュッ' }],
  [
    words(
      '房 柱 ％ ポンド ｐａ ｐｐｍ パーセント パーミル パスカル パック パット ピーピーエム ピコ ページ 頁 ペア ペセタ ペソ ペニー ' +
        'ペニヒ ペンス ポイント 振り 針 袋 張り 平米 平方キロ 平方キロメートル 平方センチメートル 平方メートル 品目',
    ),
    { 十: 'ジュッ' },
  ],
];

/** Counters whose first kana is voiced (1) or made p- (2) after some numerals: 三本 サンボン, 一本 イッポン. */
const COUNTER_AFTER_NUMERAL: ReadonlyArray<readonly [ReadonlySet<string>, Readonly<Record<string, number>>]> = [
  [
    words('分 版 敗 発 拍 鉢 波 派 泊 犯 班 品 分間 分目 片 篇 編 辺 遍 歩 報 方'),
    { 一: 2, 三: 2, 四: 2, 六: 2, 八: 2, 十: 2, 百: 2, 千: 2, 万: 2, 何: 2 },
  ],
  [words('本 匹 疋 票 俵 箱 本立て 杯 針 柱'), { 一: 2, 三: 1, 六: 2, 八: 2, 十: 2, 百: 2, 千: 1, 万: 1, 何: 1 }],
  [words('軒 石 足 尺 かけ 重ね 件 勺'), { 三: 1, 千: 1, 万: 1 }],
  [words('階'), { 三: 1 }],
];
const VOICED: Table = {
  カ: 'ガ', キ: 'ギ', ク: 'グ', ケ: 'ゲ', コ: 'ゴ', サ: 'ザ', シ: 'ジ', ス: 'ズ', セ: 'ゼ', ソ: 'ゾ', タ: 'ダ', チ: 'ヂ', ツ: 'ヅ',
  テ: 'デ', ト: 'ド', ハ: 'バ', ヒ: 'ビ', フ: 'ブ', ヘ: 'ベ', ホ: 'ボ',
};
const SEMIVOICED: Table = { ハ: 'パ', ヒ: 'ピ', フ: 'プ', ヘ: 'ペ', ホ: 'ポ' };

/** Native counters (string:reading) before which 一 and 二 are ヒト and フタ: 一箱 ヒトハコ, 二通り フタトオリ. */
const NATIVE_COUNTERS = words(
  '棟:ムネ かけ:カケ くだり:クダリ けた:ケタ すじ:スジ そろい:ソロイ たび:タビ つかみ:ツカミ つがい:ツガイ つまみ:ツマミ とおり:トオリ ' +
    'ところ:トコロ とせ:トセ まわり:マワリ シーズン:シーズン セット:セット 握り:ニギリ 回り:マワリ 株:カブ 竿:サオ 筋:スジ 桁:ケタ ' +
    'ケタ:ケタ 月:ツキ 言:コト 口:クチ 差し:サシ 皿:サラ 山:ヤマ 勺:シャク 尺:シャク 重ね:カサネ 振り:フリ 針:ハリ 切れ:キレ 束:タバ ' +
    '続き:ツヅキ 揃:ソロイ 袋:フクロ 柱:ハシラ 張り:ハリ 通り:トオリ 掴み:ツカミ 坪:ツボ 箱:ハコ 鉢:ハチ 晩:バン 品:シナ 瓶:ビン ' +
    '分け:ワケ 幕:マク 夜:ヤ 夜:ヨ 粒:ツブ 枠:ワク 棹:サオ つ折:ツオリ つ折り:ツオリ つぶ:ツブ とき:トキ 重ね:ガサネ',
);
const NATIVE_NUMERALS: Table = { 一: 'ヒト', 二: 'フタ' };
/** A word of a numeral and its counter read as one, as a dictionary feature (`read` or `read/pron` where they differ). */
function countedWord(string: string, reading: string): string {
  const [read = '', pron = read] = reading.split('/');
  return `${string},名詞,副詞可能,*,*,*,*,${string},${read},${pron},0/${pron.length},*`;
}
const PEOPLE: Table = { 一: countedWord('一人', 'ヒトリ'), 二: countedWord('二人', 'フタリ') };
const DAY_READINGS = '一:イチニチ 二:フツカ 三:ミッカ 四:ヨッカ 五:イツカ 六:ムイカ 七:ナノカ 八:ヨウカ/ヨーカ 九:ココノカ 十:トウカ/トーカ'
  .split(' ')
  .map((entry) => entry.split(':') as [string, string]);
/** 二日 フツカ ... and 二日間 フツカカン ... */
const DAYS: Table = Object.fromEntries(DAY_READINGS.map(([numeral, reading]) => [numeral, countedWord(`${numeral}日`, reading)]));
const DAY_SPANS: Table = Object.fromEntries(
  DAY_READINGS.map(([numeral, reading]) => [numeral, countedWord(`${numeral}日間`, reading.split('/').map((part) => `${part}カン`).join('/'))]),
);
const TSUITACHI = '一日,名詞,副詞可能,*,*,*,*,一日,ツイタチ,ツイタチ,4/4,*';
const JUYOKKA = '十四日,名詞,副詞可能,*,*,*,*,十四日,ジュウヨッカ,ジューヨッカ,1/5,*';
const JUYOKKAKAN = '十四日間,名詞,副詞可能,*,*,*,*,十四日間,ジュウヨッカカン,ジューヨッカカン,5/7,*';
const NIJU = '二十,名詞,副詞可能,*,*,*,*,二十,ニジュウ,ニジュー,1/3,*';
const YOKKA = '四日,名詞,副詞可能,*,*,*,*,四日,ヨッカ,ヨッカ,0/3,*,0';
const YOKKAKAN = '四日間,名詞,副詞可能,*,*,*,*,四日間,ヨッカカン,ヨッカカン,3/5,*,0';
const HATSUKA = '二十日,名詞,副詞可能,*,*,*,*,二十日,ハツカ,ハツカ,0/3,*';
const HATSUKAKAN = '二十日間,名詞,副詞可能,*,*,*,*,二十日間,ハツカカン,ハツカカン,3/5,*';
const DECIMAL_POINT = '．,名詞,接尾,助数詞,*,*,*,．,テン,テン,0/2,*,-1';
/** Before a counter: 百 after 六 and 八 (ロッピャク), 千 and 兆 after 一 and 八, and 百 and 千 voiced after 三 六 八 何. */
const BEFORE_HUNDRED: Table = { 六: 'ロッ', 八: 'ハッ' };
const BEFORE_THOUSAND: Table = { 一: 'イッ', 八: 'ハッ', 十: 'ジュッ' };
const HUNDRED_THOUSAND_VOICING: Readonly<Record<string, number>> = { 三: 1, 六: 2, 八: 2, 何: 1 };

const HYPHENS = new Set(['―', '−', '‐', '—', '－']);
const isPeriod = (text: string): boolean => text === '．' || text === '・';
const isComma = (text: string): boolean => text === '，';
const UNSET = '*';

/** The nodes as Open JTalk's doubly linked list, which the rules walk, insert into and remove from. */
interface Linked extends NjdNode {
  prev: Linked | undefined;
  next: Linked | undefined;
}

class NodeList {
  head: Linked | undefined;
  tail: Linked | undefined;

  constructor(nodes: readonly NjdNode[]) {
    for (const node of nodes) this.append({ ...node, prev: undefined, next: undefined });
  }

  private append(node: Linked): void {
    node.prev = this.tail;
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
  }

  /** NJD_remove_node: unlinks `node` (its text goes to the node before it, else after) and returns the next. */
  remove(node: Linked): Linked | undefined {
    const { prev, next } = node;
    if (prev) {
      prev.next = next;
      prev.end = Math.max(prev.end, node.end);
    } else {
      this.head = next;
    }
    if (next) {
      next.prev = prev;
      if (!prev) next.start = Math.min(next.start, node.start);
    } else {
      this.tail = prev;
    }
    return next;
  }

  /** NJDNode_insert: `node` after `after`, standing for the same text. */
  insertAfter(after: Linked, feature: string): Linked {
    const node: Linked = { ...after, prev: after, next: after.next };
    loadFeature(node, feature);
    if (after.next) after.next.prev = node;
    else this.tail = node;
    after.next = node;
    return node;
  }

  /** NJD_remove_silent_node: the nodes left without a pronunciation go. */
  removeSilent(): void {
    for (let node = this.head; node; ) node = node.pron === UNSET ? this.remove(node) : node.next;
  }

  toArray(): NjdNode[] {
    const nodes: NjdNode[] = [];
    for (let node = this.head; node; node = node.next) {
      const { string, pos, posGroup1, posGroup2, ctype, cform, orig, read, pron, moraSize, start, end } = node;
      nodes.push({ string, pos, posGroup1, posGroup2, ctype, cform, orig, read, pron, moraSize, start, end });
    }
    return nodes;
  }
}

function silence(node: Linked): void {
  node.pron = UNSET;
}

/** get_digit: the numeral's value, or -1; with `convert`, the kana or full-width numeral is written as kanji. */
function digitOf(node: Linked, convert: boolean): number {
  if (node.string === UNSET || node.posGroup1 !== KAZU) return -1;
  const found = NUMERALS.find(([string]) => string === node.string);
  if (!found) return -1;
  if (convert) {
    node.string = found[2];
    node.orig = found[2];
  }
  return found[1];
}

/** get_digit_sequence_score: whether digits between `start` and `end` read as a number (>= 0) or one by one. */
function sequenceScore(start: Linked, end: Linked): number {
  let score = 0;
  const before = start.prev;
  if (before) {
    if (before.posGroup1 === '数接続') score += 2;
    if (before.posGroup2 === JOSUUSHI || before.posGroup1 === FUKUSHIKANOU) score += 1;
    const twoBefore = before.prev;
    if (isPeriod(before.string)) score -= twoBefore && twoBefore.posGroup1 === KAZU ? 5 : 0;
    else if (HYPHENS.has(before.string)) score -= 2;
    else if (before.string === '（') score -= twoBefore && twoBefore.posGroup1 === KAZU ? 2 : 0;
    else if (before.string === '）' || before.string === '番号') score -= 2;
    if (twoBefore && twoBefore.string === '番号') score -= 2;
  }
  const after = end.next;
  if (after) {
    if (after.posGroup2 === JOSUUSHI || after.posGroup1 === FUKUSHIKANOU) score += 2;
    const twoAfter = after.next;
    if (HYPHENS.has(after.string) || after.string === '（' || after.string === '番号') score -= 2;
    else if (after.string === '）') score -= twoAfter && twoAfter.posGroup1 === KAZU ? 2 : 0;
    else if (isPeriod(after.string)) score += 4;
  }
  return score;
}

/** Digits read one by one (a code, a phone number): 〇 ゼロ, 二 ニー, 五 ゴー. */
function readDigitByDigit(start: Linked, end: Linked): void {
  if (start === end) return;
  for (let node: Linked | undefined = start; node && node !== end.next; node = node.next) {
    if (node.string === '〇' || node.string === '０') node.pron = 'ゼロ';
    else if (node.string === '二') node.pron = 'ニー';
    else if (node.string === '五') node.pron = 'ゴー';
  }
}

/** Digits read as a number: 二〇二四 ニセンニジューヨン (zeros silent, places inserted). */
function readAsNumber(list: NodeList, start: Linked, end: Linked): void {
  let size = 0;
  for (let node: Linked | undefined = start; node && node !== end.next; node = node.next) size++;
  if (size <= 1) return;
  let index = size % 4 || 4;
  let place = size > index ? (size - index) / 4 : 0;
  index--;
  if (place > 17) return;
  let have = false;
  for (let node: Linked | undefined = start; node && node !== end.next; node = node.next) {
    const digit = digitOf(node, false);
    if (index === 0) {
      if (digit === 0) silence(node);
      else have = true;
      if (have) {
        if (place > 0) node = list.insertAfter(node, GROUPS[place - 1] ?? '');
        have = false;
      }
      place--;
    } else if (digit <= 0) {
      silence(node);
    } else if (digit === 1) {
      loadFeature(node, PLACES[index - 1] ?? '');
      have = true;
    } else {
      node = list.insertAfter(node, PLACES[index - 1] ?? '');
      have = true;
    }
    index--;
    if (index < 0) index = 3;
  }
}

/** convert_digit_sequence: a run of numerals, commas and points between `start` and `end`. */
function readSequence(list: NodeList, start: Linked | undefined, end: Linked | undefined): void {
  if (!start || !end) return;
  if (isComma(start.string) || isPeriod(start.string)) {
    if (start !== end) readSequence(list, start.next, end);
    return;
  }
  let lastBeforePoint = start;
  while (lastBeforePoint.next && lastBeforePoint !== end && !isPeriod(lastBeforePoint.next.string)) lastBeforePoint = lastBeforePoint.next;
  while (lastBeforePoint.prev && lastBeforePoint !== start && isComma(lastBeforePoint.string)) lastBeforePoint = lastBeforePoint.prev;
  // 1: a number, 0: not known, -1: digit by digit.
  let numerical = 1;
  let commas = 0;
  let firstComma: Linked | undefined;
  for (let node: Linked | undefined = lastBeforePoint, fromRight = 0; node; node = node.prev, fromRight++) {
    if (isComma(node.string)) {
      firstComma = node;
      commas++;
      if (numerical === 1 && fromRight % 4 !== 3) numerical = 0;
    } else if (numerical === 1 && fromRight % 4 === 3) {
      numerical = 0;
    }
    if (node === start) break;
  }
  if (start !== lastBeforePoint && digitOf(start, false) === 0) numerical = -1;
  if (numerical === 1 && commas === 0) numerical = 0;
  if (numerical === 1) {
    for (let node: Linked | undefined = start; node && node !== lastBeforePoint; ) node = isComma(node.string) ? list.remove(node) : node.next;
    readAsNumber(list, start, lastBeforePoint);
    if (lastBeforePoint !== end) readSequence(list, lastBeforePoint.next, end);
    return;
  }
  const lastDigit = firstComma ? (firstComma.prev as Linked) : lastBeforePoint;
  if (numerical === 0) numerical = sequenceScore(start, lastDigit) >= 0 ? 1 : -1;
  if (numerical === 1) readAsNumber(list, start, lastDigit);
  else readDigitByDigit(start, lastDigit);
  if (lastDigit !== end) readSequence(list, lastDigit.next, end);
}

/** convert_numerative_pron: the counter's first kana voiced or made p- after the numeral. */
function voiceCounter(types: Readonly<Record<string, number>>, numeral: Linked, counter: Linked): void {
  const type = numeral.string === UNSET ? undefined : types[numeral.string];
  const table = type === 1 ? VOICED : type === 2 ? SEMIVOICED : undefined;
  const first = counter.pron[0] ?? '';
  const replacement = table?.[first];
  if (replacement) counter.pron = replacement + counter.pron.slice(1);
}

function setPron(table: Table, node: Linked): void {
  const pron = node.string === UNSET ? undefined : table[node.string];
  if (pron !== undefined) node.pron = pron;
}

const isCounter = (node: Linked): boolean => node.posGroup2 === JOSUUSHI || node.posGroup1 === FUKUSHIKANOU;

/** njd_set_digit over the nodes of a text. */
export function readNumerals(nodes: readonly NjdNode[]): NjdNode[] {
  const list = new NodeList(nodes);
  let found = false;
  let start: Linked | undefined;
  let end: Linked | undefined;
  for (let node = list.head; node; node = node.next) {
    if (node.posGroup1 === KAZU) found = true;
    if (digitOf(node, true) >= 0 || (node.posGroup1 === KAZU && (isPeriod(node.string) || isComma(node.string)))) {
      start ??= node;
      if (node === list.tail) end = node;
    } else if (start) {
      end = node.prev;
    }
    if (start && end) {
      readSequence(list, start, end);
      start = end = undefined;
    }
  }
  if (!found) return list.toArray();
  list.removeSilent();
  if (!list.head) return [];

  // A point between numerals: テン, the numeral before it read ready for it (レー, ニー, ゴー).
  for (let node = list.head.next; node && node.next; ) {
    const prev = node.prev as Linked;
    if (node.string !== UNSET && prev.string !== UNSET && isPeriod(node.string) && prev.posGroup1 === KAZU && node.next.posGroup1 === KAZU) {
      loadFeature(node, DECIMAL_POINT);
      if (prev.string === '〇' || prev.string === '０') prev.pron = 'レー';
      else if (prev.string === '二') prev.pron = 'ニー';
      else if (prev.string === '五') prev.pron = 'ゴー';
      let skip: Linked | undefined = node.next;
      while (skip && skip.pos === '名詞') skip = skip.next;
      node = skip?.next;
    } else {
      node = node.next;
    }
  }

  // A numeral before a counter.
  for (let node = list.head.next; node; node = node.next) {
    const numeral = node.prev as Linked;
    if (numeral.posGroup1 !== KAZU || !isCounter(node)) continue;
    const before = NUMERAL_BEFORE_COUNTER.find(([counters]) => node.string !== UNSET && counters.has(node.string));
    if (before) setPron(before[1], numeral);
    const after = COUNTER_AFTER_NUMERAL.find(([counters]) => node.string !== UNSET && counters.has(node.string));
    if (after) voiceCounter(after[1], numeral, node);
  }

  // A numeral before 百, 千 or 兆.
  for (let node = list.head.next; node; node = node.next) {
    const numeral = node.prev as Linked;
    if (numeral.posGroup1 !== KAZU) continue;
    if (node.string === '百') setPron(BEFORE_HUNDRED, numeral);
    if (node.string === '千' || node.string === '兆') setPron(BEFORE_THOUSAND, numeral);
    if (node.string === '百' || node.string === '千') voiceCounter(HUNDRED_THOUSAND_VOICING, numeral, node);
  }

  // Native readings: 一つ箱 ヒトハコ, 一人 ヒトリ, 二日 フツカ, 一日 after a month ツイタチ.
  for (let node: Linked | undefined = list.head; node; node = node.next) {
    const next = node.next;
    if (!next || next.string === UNSET || node.posGroup1 !== KAZU || !isCounter(next)) continue;
    if (node.prev && node.prev.pos !== '記号' && node.prev.posGroup1 === KAZU) continue;
    if (NATIVE_COUNTERS.has(`${next.string}:${next.read}`)) {
      const native = NATIVE_NUMERALS[node.string];
      if (native) node.read = node.pron = native;
    }
    if (next.string === '人' && PEOPLE[node.string]) {
      loadFeature(node, PEOPLE[node.string] ?? '');
      silence(next);
    }
    if (next.string === '日' && node.string !== UNSET) {
      if (node.prev && node.prev.string.includes('月') && node.string === '一') {
        loadFeature(node, TSUITACHI);
        silence(next);
      } else if (DAYS[node.string]) {
        loadFeature(node, DAYS[node.string] ?? '');
        silence(next);
      }
    } else if (next.string === '日間' && DAY_SPANS[node.string]) {
      loadFeature(node, DAY_SPANS[node.string] ?? '');
      silence(next);
    }
  }

  // 十四日 ジューヨッカ, 二十日 ハツカ, 二十四日 ニジューヨッカ (and their 日間).
  for (let node: Linked | undefined = list.head; node; node = node.next) {
    const second = node.next;
    const third = second?.next;
    if ((node.prev && node.prev.posGroup1 === KAZU) || !second || !third) continue;
    if (node.string === '十' && second.string === '四') {
      const feature = third.string === '日' ? JUYOKKA : third.string === '日間' ? JUYOKKAKAN : undefined;
      if (feature) {
        loadFeature(node, feature);
        silence(second);
        silence(third);
      }
    } else if (node.string === '二' && second.string === '十') {
      const feature = third.string === '日' ? HATSUKA : third.string === '日間' ? HATSUKAKAN : undefined;
      const fourth = third.next;
      if (feature) {
        loadFeature(node, feature);
        silence(second);
        silence(third);
      } else if (third.string === '四' && fourth && (fourth.string === '日' || fourth.string === '日間')) {
        loadFeature(node, NIJU);
        loadFeature(second, fourth.string === '日' ? YOKKA : YOKKAKAN);
        silence(third);
        silence(fourth);
      }
    }
  }
  list.removeSilent();
  return list.toArray();
}
