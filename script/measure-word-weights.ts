// `node --import tsx script/measure-word-weights.ts`: how well characters, syllables and phonemes predict when each
// word of a Chinese or Japanese sentence starts in eSpeak NG's speech, for the weight of spokenWeight()
// (src/speech/word-segments.ts). The truth is eSpeak NG's own word events: one per Chinese character at its position,
// one per Japanese character at the sentence's position (matched in order where their count is the character count).
import createEspeakModule from '@echogarden/espeak-ng-emscripten';
import { spokenWeight, textTokens, type TextToken } from '../src/speech/word-segments.js';

const SENTENCES: Record<string, string[]> = {
  'sit/cmn': [
    '今天天气很好，我们去公园散步吧。',
    '这个城市的交通非常方便，地铁可以到达每一个角落。',
    '我昨天买了一本关于中国历史的书。',
    '请在下一个路口向左转，然后一直往前走。',
    '他每天早上六点起床，先跑步再吃早饭。',
    '人工智能正在改变我们的生活和工作方式。',
    '这家餐厅的饺子特别好吃，价格也不贵。',
    '明天下午三点在会议室开会，请大家准时参加。',
  ],
  'jpx/ja': [
    '今日はいい天気ですね。',
    'ラーメンを食べに行きましょう。',
    'わたしはまいにちがっこうにいきます。',
    'このほんはとてもおもしろいです。',
    '東京の電車はとても便利です。',
    'コーヒーとケーキをください。',
    'あしたはあめがふるかもしれません。',
    '日本語を勉強しています。',
  ],
};

const SMALL_KANA = /[ぁぃぅぇぉゃゅょゎァィゥェォャュョヮ]/u;
const LETTER = /[\p{L}\p{N}]/u;

type Measure = (token: TextToken, phonemes: number) => number;
const MEASURES: Record<string, Measure> = {
  'spokenWeight (what timedWords uses)': (token) => spokenWeight(token),
  'characters with the marks': (token) => [...token.text].length,
  characters: (token) => [...token.text].filter((char) => LETTER.test(char)).length,
  // Chinese characters are one syllable each; kana one mora each except the small ones.
  syllables: (token) => [...token.text].filter((char) => LETTER.test(char) && !SMALL_KANA.test(char)).length,
  'phonemes (the engine\'s own)': (_token, phonemes) => phonemes,
};

interface Event { type: string; position: number; ms: number; phoneme: string }

const espeak = await createEspeakModule();
const synthesizer = new espeak.eSpeakNGWorker();
for (const [voice, sentences] of Object.entries(SENTENCES)) {
  synthesizer.set_voice(voice);
  const errors: Record<string, number[]> = Object.fromEntries(Object.keys(MEASURES).map((name) => [name, []]));
  let used = 0;
  for (const sentence of sentences) {
    const events: Event[] = [];
    synthesizer.synthesize(sentence, (_samples, raw) => {
      for (const event of raw) events.push({ type: event.type, position: event.text_position, ms: event.audio_position, phoneme: String(event.id ?? '') });
      return false;
    });
    const chars = [...sentence];
    const letters = chars.flatMap((char, index) => (LETTER.test(char) ? [index] : []));
    const words = events.filter((event) => event.type === 'word');
    const byPosition = new Set(words.map((word) => word.position)).size > 1;
    if (!byPosition && words.length !== letters.length) continue;
    used += 1;
    // Code point index of each word event, and the phonemes that follow it up to the next word event.
    const starts = new Map<number, number>();
    const phonemes = new Map<number, number>();
    let current = -1;
    let wordNumber = 0;
    for (const event of events) {
      if (event.type === 'word') {
        current = byPosition ? event.position - 1 : (letters[wordNumber] as number);
        wordNumber += 1;
        if (!starts.has(current)) starts.set(current, event.ms);
      } else if (event.type === 'phoneme' && event.phoneme.trim() !== '' && current >= 0) {
        phonemes.set(current, (phonemes.get(current) ?? 0) + 1);
      }
    }
    const lastSound = events.findLast((event) => event.type === 'phoneme' && event.phoneme.trim() !== '');
    const soundEnd = events.find((event) => lastSound && event.ms > lastSound.ms)?.ms ?? lastSound?.ms ?? 0;
    const tokens = textTokens(sentence);
    // Code point ranges of the tokens (the sentences have no surrogate pairs: UTF-16 offsets are code point indices).
    const truth = tokens.map((token) => starts.get(token.offset));
    const tokenPhonemes = tokens.map((token) => {
      let count = 0;
      for (let index = token.offset; index < token.offset + token.length; index++) count += phonemes.get(index) ?? 0;
      return count;
    });
    const begin = truth[0] ?? 0;
    for (const [name, measure] of Object.entries(MEASURES)) {
      const weights = tokens.map((token, index) => measure(token, tokenPhonemes[index] as number));
      const total = weights.reduce((sum, weight) => sum + weight, 0);
      let done = 0;
      tokens.forEach((_token, index) => {
        const predicted = begin + ((soundEnd - begin) * done) / total;
        done += weights[index] as number;
        const real = truth[index];
        if (real !== undefined && index > 0) errors[name]?.push(Math.abs(predicted - real));
      });
    }
  }
  console.log(`${voice}: ${used} of ${sentences.length} sentences`);
  for (const [name, list] of Object.entries(errors)) {
    const sorted = [...list].sort((a, b) => a - b);
    const mean = list.reduce((sum, value) => sum + value, 0) / list.length;
    console.log(`  ${name}: mean ${mean.toFixed(0)} ms, median ${(sorted[sorted.length >> 1] ?? 0).toFixed(0)} ms, worst ${(sorted.at(-1) ?? 0).toFixed(0)} ms over ${list.length} word starts`);
  }
}
