import { describe, expect, it } from 'vitest';
import { joinSpeech, SpeechJoiner } from '../../src/speech/pcm.js';
import type { SpokenSpan } from '../../src/speech/speech.js';

describe('SpeechJoiner', () => {
  it('lays the streamed pieces end to end exactly as joinSpeech joins them', () => {
    const tone = (length: number, lead: number) =>
      Int16Array.from({ length }, (_, i) => (i < lead || i > length - lead ? 0 : Math.round(8000 * Math.sin(i / 7))));
    const chunks: SpokenSpan[] = [tone(4000, 500), new Int16Array(300), tone(2500, 100), tone(3000, 0)].map((samples, i) => ({
      samples,
      sampleRate: 16_000,
      span: { text: `sentence ${i}`, offset: i * 20 },
    }));
    const joiner = new SpeechJoiner(16_000);
    const pieces = [...chunks.map((chunk) => joiner.push(chunk)), joiner.end()];
    const streamed = Int16Array.from(pieces.flatMap((piece) => [...piece]));
    expect(streamed).toEqual(joinSpeech(chunks).samples);
  });
});
