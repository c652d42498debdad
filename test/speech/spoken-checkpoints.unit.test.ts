import { describe, expect, it } from 'vitest';
import { decodeSpoken, encodeSpoken } from '../../src/speech/spoken-checkpoints.js';
import type { SpokenSpan } from '../../src/speech/speech.js';

describe('a spoken utterance as a checkpoint', () => {
  it('reads back exactly: every sample, its span, word times and pause', () => {
    const samples = Int16Array.from({ length: 22_051 }, (_, index) => ((index * 7919) % 65_536) - 32_768);
    const spoken: SpokenSpan = {
      samples,
      sampleRate: 22_050,
      span: { text: 'Down the rabbit-hole. ✨', offset: 1234 },
      words: [{ word: 'Down', start: 0.1 / 3, end: 0.45, textOffset: 0, textLength: 4 }],
      pauseBefore: 0.75,
    };
    const back = decodeSpoken(encodeSpoken(spoken));
    expect(back).toEqual(spoken);
    expect(Buffer.from(back.samples.buffer).equals(Buffer.from(samples.buffer))).toBe(true);
    // Without words or a pause, none are made up.
    const plain = decodeSpoken(encodeSpoken({ samples: new Int16Array(0), sampleRate: 24_000, span: { text: 'x', offset: 0 } }));
    expect(plain).toEqual({ samples: new Int16Array(0), sampleRate: 24_000, span: { text: 'x', offset: 0 } });
  });

  it('refuses one cut short', () => {
    const whole = encodeSpoken({ samples: new Int16Array(100), sampleRate: 16_000, span: { text: 'a', offset: 0 } });
    expect(() => decodeSpoken(whole.subarray(0, whole.length - 2))).toThrow();
  });
});
