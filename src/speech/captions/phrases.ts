import { createRequire } from 'node:module';
import type * as Budoux from 'budoux';

/**
 * Phrases of Chinese, Japanese and Thai: where a caption line or group may begin inside a run written without
 * spaces. A word segmenter's words are too small to break at (Japanese particles would start a line, いい|ね and
 * 「ショート|動画」 would part); BudouX (npm `budoux`, Google's phrase segmenter for exactly this) gives phrases
 * with each particle kept with the word before it. A line may begin only where a phrase and a word begin both: the
 * words come from Intl.Segmenter (word-segments.ts), which keeps loanwords whole where BudouX cuts them (วิดี|โอ).
 */

/** A word as the phrase finder needs it: its text and whether a space stands before it. */
export interface PhraseWord {
  text: string;
  spaceBefore?: boolean;
}

type Model = 'ja' | 'zh-hans' | 'zh-hant' | 'th';

const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;
const HAN = /\p{Script=Han}/u;
const THAI = /\p{Script=Thai}/u;
/** A katakana word goes on to the next character: ハイ|パー is never a place to break, whatever a model says. */
const KATAKANA_END = /[\p{Script=Katakana}ー]$/u;
const KATAKANA_START = /^[\p{Script=Katakana}ー]/u;

/** The BudouX model for a run: Japanese where it holds kana (or the voice is Japanese), Chinese by the voice's script, Thai. */
function modelFor(run: string, language: string | undefined): Model | undefined {
  const tag = language?.toLowerCase() ?? '';
  if (KANA.test(run) || (/^ja(-|$)/.test(tag) && HAN.test(run))) return 'ja';
  if (HAN.test(run)) return /^(yue|zh-(hant|tw|hk|mo))(-|$)/.test(tag) || /^zh-.*-hant(-|$)/.test(tag) ? 'zh-hant' : 'zh-hans';
  if (THAI.test(run)) return 'th';
  return undefined;
}

const parsers = new Map<Model, Budoux.Parser>();

/** BudouX's parser of a model, loaded on first use (the package and its models take about 0.2 s to load). */
function parser(model: Model): Budoux.Parser {
  let found = parsers.get(model);
  if (!found) {
    const budoux = createRequire(import.meta.url)('budoux') as typeof Budoux;
    found = {
      ja: budoux.loadDefaultJapaneseParser,
      'zh-hans': budoux.loadDefaultSimplifiedChineseParser,
      'zh-hant': budoux.loadDefaultTraditionalChineseParser,
      th: budoux.loadDefaultThaiParser,
    }[model]();
    parsers.set(model, found);
  }
  return found;
}

/**
 * Whether each word begins a phrase: every word after a space (or first); inside a run of words without spaces
 * between them, a word where BudouX begins a phrase, unless it goes on a katakana word. Scripts BudouX has no model
 * for (Lao, Khmer, Burmese) keep their words as phrases.
 */
export function phraseStarts(words: readonly PhraseWord[], language?: string): boolean[] {
  const starts = words.map((word, index) => index === 0 || word.spaceBefore !== false);
  let runStart = 0;
  for (let index = 1; index <= words.length; index++) {
    if (index < words.length && !starts[index]) continue;
    if (index - runStart > 1) markRun(words, runStart, index, starts, language);
    runStart = index;
  }
  return starts;
}

/** Words [from, to) are one run without spaces: a word inside it begins a phrase where BudouX's boundaries fall at its start. */
function markRun(words: readonly PhraseWord[], from: number, to: number, starts: boolean[], language: string | undefined): void {
  const texts = words.slice(from, to).map((word) => word.text);
  const run = texts.join('');
  const model = modelFor(run, language);
  if (!model) return;
  const boundaries = new Set(parser(model).parseBoundaries(run));
  let offset = 0;
  texts.forEach((text, position) => {
    const before = texts[position - 1];
    if (position > 0) starts[from + position] = boundaries.has(offset) && !(before !== undefined && KATAKANA_END.test(before) && KATAKANA_START.test(text));
    offset += text.length;
  });
}
