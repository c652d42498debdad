import { describe, expect, it } from 'vitest';
import { postTts, useTestApp } from '../helpers/helpers.js';

/** Each engine's main English voice; the optional engines are installed on CI. */
const VOICES = ['kokoro:af_heart', 'piper:en_US-joe-medium', 'rhvoice:slt', 'festival:slt-hts', 'flite:slt', 'espeak-ng:en-us'];
const SPEEDS = [0.5, 0.75, 1.5, 2];
const TEXT = 'The harbour wakes before the town does. Fishing boats slide out past the lighthouse, and the bakery starts its first batch of bread.';

describe('speed means speed', () => {
  // Caches off: every reading is synthesized anew.
  const t = useTestApp({ CACHE_MAX_ENTRIES: '0', SENTENCE_CACHE_MB: '0' });

  for (const voice of VOICES) {
    it(`${voice}: the file is within 10 % of 1/speed as long at 0.5, 0.75, 1.5 and 2`, async (context) => {
      if (!t.app.engines.findVoice(voice)) {
        if (process.env.CI) throw new Error(`${voice} is not installed`);
        context.skip();
      }
      const duration = async (speed: number) => (await postTts(t.app, { text: TEXT, voice, format: 'wav', speed })).duration;
      // Piper samples noise: its lengths vary a little from one reading to the next, so each is the median of three.
      const readings = voice.startsWith('piper:') ? 3 : 1;
      const median = async (speed: number) => {
        const lengths: number[] = [];
        for (let reading = 0; reading < readings; reading += 1) lengths.push(await duration(speed));
        return lengths.sort((a, b) => a - b)[Math.floor(readings / 2)] as number;
      };
      const normal = await median(1);
      for (const speed of SPEEDS) {
        const ratio = normal / (await median(speed));
        expect(ratio / speed, `${voice} at speed ${speed}: ${ratio.toFixed(3)}× shorter`).toBeGreaterThan(0.9);
        expect(ratio / speed, `${voice} at speed ${speed}: ${ratio.toFixed(3)}× shorter`).toBeLessThan(1.1);
      }
    });
  }
});
