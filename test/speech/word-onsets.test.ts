// Where a neural voice's words are heard to start (engines/word-onsets.ts): Piper's and Kokoro's word times, taken
// from their models' phoneme durations, against where Whisper base hears each word, beside eSpeak NG's, which times
// words from its own samples. Whisper hears every voice's words a little early; what matters is that a neural
// voice's times are no later than an exact engine's by more than a frame or two (they were 50 to 80 ms later).
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTts, useTestApp } from '../helpers/helpers.js';
import { heardPairs, Judge, judgeInstalled, median, QUALITY_PARAGRAPH, type TimedWord } from '../helpers/judge.js';

/** How much later than eSpeak NG's a neural voice's median start may be, as Whisper hears both (ms). */
const MAX_LAG_MS = 40;
const REFERENCE = 'espeak-ng:en-us';
const NEURAL = ['piper:en_US-joe-medium', 'kokoro:af_heart'];

// CI installs the judge and the voices (script/setup --test); elsewhere the test says why it did not run.
const available = judgeInstalled() || Boolean(process.env.CI);

describe.runIf(available)("a neural voice's words start where they are heard", () => {
  // Caches off: each reading is synthesized anew.
  const t = useTestApp({ CACHE_MAX_ENTRIES: '0', SENTENCE_CACHE_MB: '0' });
  let judge: Judge | undefined;

  beforeAll(async () => {
    judge = await Judge.start();
  }, 120_000);
  afterAll(async () => judge?.close());

  /** Our words' starts minus Whisper's, the median over the words it hears as written (seconds), and how many. */
  async function startOffset(voice: string): Promise<{ median: number; matched: number; words: number }> {
    if (!judge) throw new Error('the judge did not start');
    const result = await postTts(t.app, { text: QUALITY_PARAGRAPH, voice, format: 'wav', timestamps: true });
    const heard = await judge.judge(path.join(t.outputDir, result.url.slice(t.config.cdnUrl.length + 1)), { words: true, dnsmos: false });
    const ours = (result.words ?? []) as TimedWord[];
    const matched = heardPairs(ours, heard.words);
    return { median: median(matched.map(([word, whisper]) => word.start - whisper.start)), matched: matched.length, words: ours.length };
  }

  it(`Piper's and Kokoro's word starts are no more than ${MAX_LAG_MS} ms later than eSpeak NG's, as Whisper hears them (median)`, { timeout: 240_000 }, async () => {
    const reference = await startOffset(REFERENCE);
    for (const voice of NEURAL) {
      const offset = await startOffset(voice);
      const report = `${voice}: ${(offset.median * 1000).toFixed(0)} ms after Whisper (${offset.matched} of ${offset.words} words), ${REFERENCE} ${(reference.median * 1000).toFixed(0)} ms`;
      console.log(report);
      expect(offset.matched, report).toBeGreaterThan(offset.words * 0.8);
      expect((offset.median - reference.median) * 1000, report).toBeLessThanOrEqual(MAX_LAG_MS);
    }
  });
});
