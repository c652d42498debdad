import { describe, expect, it } from 'vitest';
import { markRecommended, startUpVoice } from '../../src/engines/recommended.js';
import type { Voice } from '../../src/engines/voice.js';

function voice(id: string, extra: Partial<Voice> = {}): Voice {
  const [engine = ''] = id.split(':');
  return { id, name: id, language: 'en-US', gender: null, engine, sampleRate: 24_000, wordTimings: true, phonemes: false, ...extra };
}

const recommendedIds = (voices: Voice[]) => markRecommended(voices, ['kokoro', 'piper', 'espeak-ng']).filter((one) => one.recommended).map((one) => one.id);

describe('the recommended voice of a language', () => {
  it('is the most natural engine’s best graded voice, not its first by name', () => {
    const voices = [voice('kokoro:af_alloy', { grade: 'C' }), voice('kokoro:af_bella', { grade: 'A-' }), voice('kokoro:af_heart', { grade: 'A' }), voice('piper:en_US-joe-medium', { quality: 'medium' })];
    expect(recommendedIds(voices)).toEqual(['kokoro:af_heart']);
    // A- before B+ before C, and a graded pack before one without a grade.
    expect(recommendedIds([voice('kokoro:af_a', { grade: 'B+' }), voice('kokoro:af_b', { grade: 'A-' }), voice('kokoro:af_c')])).toEqual(['kokoro:af_b']);
    expect(recommendedIds([voice('kokoro:af_a'), voice('kokoro:af_b', { grade: 'D' })])).toEqual(['kokoro:af_b']);
  });

  it("is Piper's higher quality voice over a lower one, then the first by id", () => {
    expect(recommendedIds([voice('piper:en_US-amy-low', { quality: 'low' }), voice('piper:en_US-ryan-high', { quality: 'high' })])).toEqual(['piper:en_US-ryan-high']);
    expect(recommendedIds([voice('piper:en_US-b-medium', { quality: 'medium' }), voice('piper:en_US-a-medium', { quality: 'medium' })])).toEqual(['piper:en_US-a-medium']);
  });

  it('`auto` as the start-up voice is the recommended American English one among those given', () => {
    const marked = markRecommended([voice('espeak-ng:en-us'), voice('piper:en_US-joe-medium', { quality: 'medium' })], ['kokoro', 'piper', 'espeak-ng']);
    expect(startUpVoice(marked, 'auto', () => undefined)?.id).toBe('piper:en_US-joe-medium');
    expect(startUpVoice(marked, 'espeak-ng:en-us', (id) => marked.find((one) => one.id === id))?.id).toBe('espeak-ng:en-us');
  });
});
