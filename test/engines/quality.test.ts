import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { postTts, useTestApp } from '../helpers/helpers.js';
import { QUALITY_PARAGRAPH, RECOGNIZER, transcribe, wordErrorRate } from '../helpers/speech-recognition.js';

/**
 * Word error rates an offline recognizer (PocketSphinx, US English) makes on each English voice reading the same
 * paragraph: intelligibility, measured. Bounds are what was measured here (BENCHMARKS.md has the figures) with room
 * for the neural voice's sampling noise; a regression in phonemes, ids or joining shows as a jump well past them.
 */
const BOUNDS: Record<string, number> = {
  'piper:en_US-joe-medium': 0.32,
  'rhvoice:clb': 0.22,
  'festival:slt-hts': 0.26,
  'flite:slt': 0.3,
  'espeak-ng:en-us': 0.95,
};

/**
 * The neural voice samples noise, so each reading differs (measured here: 24–33 % on this paragraph): it is judged by
 * the median of three readings, the others (deterministic) by one.
 */
const READINGS: Record<string, number> = { 'piper:en_US-joe-medium': 3 };

// CI installs the recognizer; elsewhere the test says why it did not run.
const available = existsSync(RECOGNIZER) || Boolean(process.env.CI);

describe.runIf(available)('intelligibility of the English voices', () => {
  // Caches off: each reading is synthesized anew.
  const t = useTestApp({ CACHE_MAX_ENTRIES: '0', SENTENCE_CACHE_MB: '0' });

  for (const [voice, bound] of Object.entries(BOUNDS)) {
    it(`${voice}: word error rate at most ${Math.round(bound * 100)} %`, async (context) => {
      if (!t.app.engines.findVoice(voice)) {
        // Festival, RHVoice and the neural voice are optional installs; CI has them all.
        if (process.env.CI) throw new Error(`${voice} is not installed`);
        context.skip();
      }
      const scored: { rate: number; heard: string }[] = [];
      for (let reading = 0; reading < (READINGS[voice] ?? 1); reading += 1) {
        const result = await postTts(t.app, { text: QUALITY_PARAGRAPH, voice, format: 'wav' });
        const heard = await transcribe(path.join(t.outputDir, result.url.slice(t.config.cdnUrl.length + 1)));
        scored.push({ rate: wordErrorRate(QUALITY_PARAGRAPH, heard), heard });
      }
      const median = scored.sort((a, b) => a.rate - b.rate)[Math.floor(scored.length / 2)];
      expect(median?.rate, median?.heard).toBeLessThanOrEqual(bound);
    });
  }

  it('scores a transcript against its text by word edits', () => {
    expect(wordErrorRate('the pot of gold', 'the pot of gold')).toBe(0);
    expect(wordErrorRate('the pot of gold', 'a pot gold')).toBe(0.5);
  });
});
