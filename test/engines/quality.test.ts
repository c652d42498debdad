import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { postTts, useTestApp } from '../helpers/helpers.js';
import { Judge, judgeInstalled, normalizeWords, numberToWords, QUALITY_PARAGRAPH, saysReading, wordErrorRate, type Judgement } from '../helpers/judge.js';

/**
 * Speech quality of the English voices, judged by Whisper base (word error rate on the Rainbow Passage's first
 * paragraph: intelligibility) and DNSMOS P.808 (naturalness, 1–5), both in test/helpers/judge.py. Bounds are what was
 * measured here (docs/operations.md, Speech quality, has the figures) with room for a word or two more; a regression
 * in phonemes, ids or joining shows as a jump well past them.
 */
const BOUNDS: Record<string, number> = {
  'kokoro:af_heart': 0.04,
  'piper:en_US-joe-medium': 0.07,
  'rhvoice:clb': 0.06,
  'festival:slt-hts': 0.1,
  'flite:slt': 0.08,
  'espeak-ng:en-us': 0.15,
};

/** The neural voice samples noise, so each reading differs: it is judged by the median of three, the others by one. */
const READINGS: Record<string, number> = { 'piper:en_US-joe-medium': 3 };
/**
 * How far the median DNSMOS of a voice read several times moves from run to run: Piper's joe 4.10, 4.15, 4.16,
 * 4.19, 4.24 in five CI runs (Kokoro's af_heart, which samples nothing, 4.22 in each). Against such a voice the
 * recommended one must be best within this spread; against the others, outright.
 */
const NOISY_DNSMOS_SPREAD = 0.1;

/** Heteronyms in context: reported per voice, not gated (Whisper's language model often writes the right word anyway). */
const HETERONYMS = [
  'The wind was too strong to wind the clock.',
  'I read the book yesterday, and I will read it again tomorrow.',
  'He wound the bandage around the wound.',
  'The dove dove into the bushes.',
  'They refuse to take out the refuse.',
  'Lead is heavier than the lead singer thinks.',
];

/** Texts with numbers, dates, abbreviations… and how each is read aloud; written on branch wt-normalize. */
const NORMALIZATION_FIXTURE = path.resolve(import.meta.dirname, '../../fixtures/normalization-en.json');
const NORMALIZATION_SHARE = 0.9;
/** Piper's joe was heard reading 47 of the 59 items (80 %): its misses are plain words Whisper hears otherwise ("costs" as "cost"). */
const NORMALIZATION_FLOOR = 0.7;

// CI installs the judge (script/setup --test); elsewhere the test says why it did not run.
const available = judgeInstalled() || Boolean(process.env.CI);

describe.runIf(available)('speech quality of the English voices (Whisper base, DNSMOS P.808)', () => {
  // Caches off: each reading is synthesized anew.
  const t = useTestApp({ CACHE_MAX_ENTRIES: '0', SENTENCE_CACHE_MB: '0' });
  let judge: Judge | undefined;
  const paragraph = new Map<string, { rate: number; dnsmos: number }>();

  beforeAll(async () => {
    judge = await Judge.start();
  });
  afterAll(async () => judge?.close());

  async function heard(text: string, voice: string, wanted?: { dnsmos: boolean }, body: Record<string, unknown> = {}): Promise<Judgement> {
    if (!judge) throw new Error('the judge did not start');
    const result = await postTts(t.app, { text, voice, format: 'wav', ...body });
    return judge.judge(path.join(t.outputDir, result.url.slice(t.config.cdnUrl.length + 1)), wanted);
  }

  /** Skips a test on a voice this machine lacks; Festival, RHVoice and the neural voice are optional, CI has them all. */
  function requireVoice(voice: string | undefined, context: TestContext): asserts voice is string {
    if (voice && t.app.engines.findVoice(voice)) return;
    if (process.env.CI) throw new Error(`${voice ?? 'the recommended English voice'} is not installed`);
    context.skip();
  }

  const recommended = () => t.app.engines.listVoices().find((voice) => voice.recommended && voice.language === 'en-US')?.id;

  for (const [voice, bound] of Object.entries(BOUNDS)) {
    it(`${voice}: word error rate on the paragraph at most ${Math.round(bound * 100)} %`, async (context) => {
      requireVoice(voice, context);
      const readings: { rate: number; dnsmos: number; transcript: string }[] = [];
      for (let reading = 0; reading < (READINGS[voice] ?? 1); reading += 1) {
        const { transcript, dnsmos } = await heard(QUALITY_PARAGRAPH, voice);
        readings.push({ rate: wordErrorRate(QUALITY_PARAGRAPH, transcript), dnsmos, transcript });
      }
      const median = <T>(values: T[], key: (value: T) => number) => [...values].sort((a, b) => key(a) - key(b))[Math.floor(values.length / 2)];
      const byRate = median(readings, (reading) => reading.rate);
      const dnsmos = median(readings, (reading) => reading.dnsmos)?.dnsmos ?? Number.NaN;
      if (!byRate) throw new Error('no reading');
      paragraph.set(voice, { rate: byRate.rate, dnsmos });
      const said = `${voice}: word error rate ${(100 * byRate.rate).toFixed(1)} % (${readings.map((r) => (100 * r.rate).toFixed(1)).join(', ')}), DNSMOS ${dnsmos.toFixed(2)}`;
      console.log(byRate.rate > 0 ? `${said}\n  heard: ${byRate.transcript}` : said);
      await context.annotate(said);
      expect(byRate.rate, byRate.transcript).toBeLessThanOrEqual(bound);
    }, 120_000);
  }

  /**
   * Naturalness ranks the neural voice first by a wide margin (DNSMOS 4.05–4.22 against 3.88 at best), so that is
   * gated. Intelligibility does not: Whisper base hears Festival's paragraph without a miss (0 of 98 words) and the
   * neural voice's median reading with 1 to 4 ("and form a" as "in form of"), so "at most Festival's" is reported here,
   * not asserted (docs/operations.md, Speech quality).
   */
  it('the recommended English voice: the best DNSMOS of the English voices (its word error rate against Festival\'s reported)', async (context) => {
    const voice = recommended();
    requireVoice(voice, context);
    const own = paragraph.get(voice);
    if (!own) throw new Error(`no paragraph measurement of ${voice}`);
    expect(voice).toBe(t.app.engines.findVoice('kokoro:af_heart') ? 'kokoro:af_heart' : 'piper:en_US-joe-medium');
    const festival = paragraph.get('festival:slt-hts');
    const percent = (rate: number) => `${(100 * rate).toFixed(1)} %`;
    const said = festival
      ? `${voice}: word error rate ${percent(own.rate)} against Festival's ${percent(festival.rate)} (${own.rate <= festival.rate ? 'at most' : 'above'} Festival's)`
      : `${voice}: word error rate ${percent(own.rate)}; Festival is not installed`;
    console.log(said);
    await context.annotate(said);
    for (const [other, { dnsmos }] of paragraph) {
      const spread = (READINGS[other] ?? 1) > 1 ? NOISY_DNSMOS_SPREAD : 0;
      expect(own.dnsmos, `DNSMOS of ${voice} against ${other}`).toBeGreaterThanOrEqual(dnsmos - spread);
    }
  });

  /** Issue 23: the listener hears what the markup asks for, not the written word. */
  it('what Whisper hears follows the markup: <sub>, <phoneme> (eSpeak NG and the neural voice) and a PLS lexicon', async () => {
    const words = async (text: string, voice: string, body?: Record<string, unknown>) => normalizeWords((await heard(text, voice, { dnsmos: false }, body)).transcript).join(' ');
    expect(await words('<speak><sub alias="Mercury">Hg</sub> is a liquid metal.</speak>', 'espeak-ng:en-us')).toContain('mercury');
    // "chocolates": a word eSpeak NG says clearly enough for Whisper ("cheese" it hears as "team", given or written).
    const chocolates = '<speak>I like <phoneme alphabet="ipa" ph="ˈtʃɑːkləts">apples</phoneme> a lot.</speak>';
    const voices = ['espeak-ng:en-us', ...(t.app.engines.findVoice('piper:en_US-joe-medium') ? ['piper:en_US-joe-medium'] : [])];
    for (const voice of voices) {
      // The neural voice's noise makes each reading differ: the most of its readings must say it.
      const readings = READINGS[voice] ?? 1;
      const heardAll: string[] = [];
      for (let reading = 0; reading < readings; reading += 1) heardAll.push(await words(chocolates, voice));
      const right = heardAll.filter((said) => said.includes('chocolate') && !said.includes('apple'));
      expect(right.length, `${voice}: ${heardAll.join(' | ')}`).toBeGreaterThan(readings / 2);
    }
    const lexicon = `<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">
      <lexeme><grapheme>apples</grapheme><phoneme>ˈtʃɑːkləts</phoneme></lexeme></lexicon>`;
    const uploaded = await t.app.inject({ method: 'POST', url: '/lexicons', payload: lexicon, headers: { 'content-type': 'application/pls+xml' } });
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const { id } = uploaded.json<{ id: string }>();
    // Without the lexicon the fruit is heard (Whisper has heard eSpeak's "apples" as "apple" in one CI run of two).
    expect(await words('I like apples a lot.', 'espeak-ng:en-us')).toMatch(/\bapples?\b/);
    expect(await words('I like apples a lot.', 'espeak-ng:en-us', { lexicons: [id] })).toContain('chocolate');
  }, 120_000);

  /**
   * Speaks `texts` in requests of `perRequest` (one Whisper window, under 30 s of speech, keeps the judge quick and
   * whole) and says which of them the transcript holds: each text's `reading` (or the text itself) as a run of words.
   */
  async function heardInBatches(voice: string, texts: { text: string; reading?: string }[], perRequest: number): Promise<{ text: string; heard?: string }[]> {
    const missed: { text: string; heard?: string }[] = [];
    for (let from = 0; from < texts.length; from += perRequest) {
      const batch = texts.slice(from, from + perRequest);
      const { transcript } = await heard(batch.map((item) => item.text).join(' '), voice, { dnsmos: false });
      for (const item of batch) if (!saysReading(transcript, item.reading ?? item.text)) missed.push({ text: item.text, heard: transcript.trim() });
    }
    return missed;
  }

  it('heteronyms in context: the recommended voice says at least 4 of 6 as written', async (context) => {
    // Whisper writes what a sentence most likely says, so a heteronym said the wrong way is often still written right:
    // a floor, not a measure of pronunciation.
    const voice = recommended();
    requireVoice(voice, context);
    const missed = await heardInBatches(voice, HETERONYMS.map((text) => ({ text })), HETERONYMS.length);
    const said = `${voice}: ${HETERONYMS.length - missed.length} of ${HETERONYMS.length} heteronym sentences heard as written` +
      (missed.length ? ` (not: ${missed.map((miss) => JSON.stringify(miss.text)).join(', ')}; heard ${JSON.stringify(missed[0]?.heard)})` : '');
    await context.annotate(said);
    expect(HETERONYMS.length - missed.length, said).toBeGreaterThanOrEqual(4);
  }, 120_000);

  it(`Piper's joe reads the normalization items as written: at least ${NORMALIZATION_FLOOR} (${NORMALIZATION_SHARE} with VOXREEL_NORMALIZATION_GATE=1)`, async (context) => {
    // Read by Piper's voice, some 8x real time here (Kokoro's, the recommended one, is about 2x: two minutes of a CI
    // run for the same check): the items are normalized the same way for every engine (speech/spoken-text.ts).
    const voice = 'piper:en_US-joe-medium';
    requireVoice(voice, context);
    if (!existsSync(NORMALIZATION_FIXTURE)) {
      if (process.env.VOXREEL_NORMALIZATION_GATE === '1' || process.env.CI) throw new Error(`${NORMALIZATION_FIXTURE} is missing`);
      context.skip();
    }
    const items = JSON.parse(readFileSync(NORMALIZATION_FIXTURE, 'utf8')) as { text: string; reading: string }[];
    // Five items a request: about 20 s of speech, one Whisper window.
    const missed = await heardInBatches(voice, items, 5);
    const share = (items.length - missed.length) / Math.max(1, items.length);
    const said = `${voice}: ${items.length - missed.length} of ${items.length} normalization items heard as their reading (${(100 * share).toFixed(0)} %)`;
    const lines = missed.map((miss) => `${JSON.stringify(miss.text)} (in ${JSON.stringify(miss.heard)})`);
    console.log([said, ...lines.map((line) => `  ${line}`)].join('\n'));
    await context.annotate(said);
    expect(share, lines.join('\n')).toBeGreaterThanOrEqual(process.env.VOXREEL_NORMALIZATION_GATE === '1' ? NORMALIZATION_SHARE : NORMALIZATION_FLOOR);
  }, 300_000);
});

describe('comparing a transcript with its text', () => {
  it('scores by word edits over the reference\'s words', () => {
    expect(wordErrorRate('the pot of gold', 'The pot of gold.')).toBe(0);
    expect(wordErrorRate('the pot of gold', 'a pot gold')).toBe(0.5);
  });

  it('spells out the digits a recognizer writes, so they are not counted as errors', () => {
    expect(numberToWords(15)).toBe('fifteen');
    expect(numberToWords(2024)).toBe('two thousand twenty four');
    expect(numberToWords(1_000_305)).toBe('one million three hundred five');
    expect(normalizeWords('It cost $5, 15% more, on the 21st at 3:05; 3.25 m, 1,200 people.').join(' ')).toBe(
      'it cost five dollars fifteen percent more on the twenty first at three oh five three point two five meters one thousand two hundred people',
    );
    expect(normalizeWords('$12.50, $0.75, £3.20 and $1.5 million on March 15 at 3.30 pm or 7am').join(' ')).toBe(
      'twelve dollars and fifty cents seventy five cents three pounds and twenty pence and one point five million dollars ' +
        'on march fifteenth at three thirty p m or seven a m',
    );
    expect(wordErrorRate('fifteen men in nineteen ninety', '15 men in 1990')).toBeGreaterThan(0);
    expect(saysReading('Yes. 15 men in 1990, all told.', 'fifteen men in nineteen ninety')).toBe(true);
    expect(saysReading('15 men in 1991', 'fifteen men in nineteen ninety two')).toBe(false);
    expect(saysReading('It was 12 km, 1 kg and 25 °C in the 1990s at 9.05.', 'it was twelve kilometers one kilogram and twenty five degrees celsius in the nineteen nineties at nine oh five')).toBe(true);
    expect(saysReading('Pi is 3.14.', 'pi is three point one four')).toBe(true);
    expect(saysReading('Call 555-123-4567 today.', 'call five five five one two three four five six seven today')).toBe(true);
    expect(saysReading("Mr. Smith's 2nd car", 'mister smiths second car')).toBe(true);
    // Digits stand for any way of saying them, as house and phone numbers are said; a different number still fails.
    expect(saysReading('He lives at 221 B Baker Street.', 'he lives at two twenty one b baker street')).toBe(true);
    expect(saysReading('Dial plus 1, 555, 1, 2, 3, 4, 5, 6, 7, now.', 'dial plus one five five five one two three four five six seven now')).toBe(true);
    expect(saysReading('He lives at 231 B Baker Street.', 'he lives at two twenty one b baker street')).toBe(false);
    expect(saysReading('The disc holds 2 GB.', 'the disk holds two gigabytes')).toBe(true);
    expect(saysReading('In March 2020 it was -5 in room 4A.', 'in march twenty twenty it was minus five in room four a')).toBe(true);
  });
});
