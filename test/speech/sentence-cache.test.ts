import { fixture } from '../helpers/fixtures.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SentenceCache, type SentenceKey } from '../../src/speech/sentence-cache.js';
import { EspeakEngine } from '../../src/engines/espeak/engine.js';
import type { Speaker, SpeechChunk, SynthesizeOptions, VoiceHandle } from '../../src/engines/types.js';
import type { Voice } from '../../src/engines/voice.js';
import { Metrics } from '../../src/jobs/metrics.js';
import { Limiter } from '../../src/jobs/admission/limiter.js';
import type { Speech } from '../../src/speech/speech.js';
import { Synthesizer } from '../../src/speech/synthesizer.js';
import { LocalStorage } from '../../src/storage/local.js';
import { ScratchSpace } from '../../src/storage/scratch.js';
import { ffmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const VOICE = 'espeak-ng:en-us';
const ORIGINAL = 'The first sentence stays the same. The second one is about to change. The third sentence stays as well.';
const EDITED = 'The first sentence stays the same. The middle one has now been edited. The third sentence stays as well.';
const root = useTempDir('voxreel-sentence-cache-');

interface EngineCall {
  text: string;
  signal: AbortSignal | undefined;
  result: Promise<SpeechChunk>;
}

/** The real engine, with every call it gets written down. */
class CountingSpeaker implements Speaker {
  readonly calls: EngineCall[] = [];
  onCall: ((call: EngineCall) => void) | undefined;

  constructor(private readonly engine: Speaker) {}

  findVoice(voiceId: string): Voice | undefined {
    return this.engine.findVoice(voiceId);
  }

  /** The voice bound to this speaker, so that the synthesizer's every call is written down here. */
  handleOf(voiceId: string): VoiceHandle | undefined {
    const voice = this.findVoice(voiceId);
    return voice && { ...voice, speedShare: 1, synthesize: (text, options) => this.synthesize(voice.id, text, options) };
  }

  synthesize(voiceId: string, text: string, options: SynthesizeOptions = {}): Promise<SpeechChunk> {
    const result = this.engine.synthesize(voiceId, text, options);
    result.catch(() => undefined);
    const call = { text, signal: options.signal, result };
    this.calls.push(call);
    this.onCall?.(call);
    return result;
  }

  texts(from = 0): string[] {
    return this.calls.slice(from).map((call) => call.text);
  }
}

let espeak: EspeakEngine;
let faulty: EspeakEngine;
let scratch: ScratchSpace;
let storage: LocalStorage;
let voice: Voice;

beforeAll(async () => {
  [espeak, faulty] = await Promise.all([
    EspeakEngine.create({ poolSize: 2 }),
    // The real eSpeak NG host, crashing on request (`FAULT:segfault`): the one failure a real engine cannot make on demand.
    EspeakEngine.create({ poolSize: 1, hostModule: fixture('faulty-espeak-host.ts') }),
  ]);
  storage = new LocalStorage(`${root}/out`, 'http://files.example');
  await storage.init();
  scratch = await ScratchSpace.open(`${root}/scratch`);
  voice = espeak.findVoice(VOICE) as Voice;
});
afterAll(async () => {
  await Promise.all([espeak?.close(), faulty?.close(), scratch?.close()]);
});

function synthesizerOn(engine: Speaker, cache: SentenceCache, metrics?: Metrics): Synthesizer {
  return new Synthesizer(engine, ffmpeg, storage, scratch, { audioSeconds: 600, videoSeconds: 300 }, metrics, { sentenceCache: cache });
}

/** The samples of one sentence of a joined speech, where its timings place it. */
function sentenceSamples(speech: Speech, index: number): Buffer {
  const sentence = speech.sentences[index];
  if (!sentence) throw new Error(`no sentence ${index}`);
  const part = speech.samples.subarray(Math.round(sentence.start * speech.sampleRate), Math.round(sentence.end * speech.sampleRate));
  return Buffer.from(part.buffer, part.byteOffset, part.byteLength);
}

function keyOf(text: string): SentenceKey {
  return { voiceId: voice.id, engine: voice.engine, text };
}

/** `cache.speak` of one sentence on the counting engine. */
function speakOn(cache: SentenceCache, engine: CountingSpeaker, text: string, signal?: AbortSignal) {
  return cache.speak(keyOf(text), (engineSignal) => engine.synthesize(VOICE, text, { signal: engineSignal }), signal);
}

async function sentenceSeries(metrics: Metrics): Promise<string[]> {
  return (await metrics.registry.metrics()).split('\n').filter((line) => line.startsWith('voxreel_sentence_cache_'));
}

describe('the sentence cache in the synthesizer', () => {
  it('speaks only the edited sentence of a text spoken before, and the others are the same sample for sample', async () => {
    const engine = new CountingSpeaker(espeak);
    const cache = new SentenceCache(64 * 1024 * 1024);
    const metrics = new Metrics(() => new Limiter({ concurrency: 1, queueLength: 0 }).stats, { sentenceCache: cache });
    const synthesizer = synthesizerOn(engine, cache, metrics);
    try {
      const before = await synthesizer.speak({ text: ORIGINAL, voice: synthesizer.voiceOf(VOICE) }, synthesizer.budget('audio'));
      expect(engine.texts().sort()).toEqual(
        ['The first sentence stays the same.', 'The second one is about to change.', 'The third sentence stays as well.'].sort(),
      );
      expect(cache.size).toBe(3);

      const after = await synthesizer.speak({ text: EDITED, voice: synthesizer.voiceOf(VOICE) }, synthesizer.budget('audio'));
      expect(engine.texts(3)).toEqual(['The middle one has now been edited.']);
      expect(after.sentences).toHaveLength(3);
      expect(sentenceSamples(after, 0).length).toBeGreaterThan(10_000);
      expect(sentenceSamples(after, 0).equals(sentenceSamples(before, 0))).toBe(true);
      expect(sentenceSamples(after, 2).equals(sentenceSamples(before, 2))).toBe(true);
      expect(sentenceSamples(after, 1).equals(sentenceSamples(before, 1))).toBe(false);
      // Word timings of a cached sentence come back too, moved to where it now stands.
      const thirdWords = (speech: Speech) => speech.words.filter((word) => word.textOffset >= (speech.sentences[2]?.textOffset ?? Infinity));
      expect(thirdWords(after).map((word) => word.word)).toEqual(thirdWords(before).map((word) => word.word));
      expect(thirdWords(after).length).toBeGreaterThan(3);

      expect(await sentenceSeries(metrics)).toEqual(
        expect.arrayContaining([
          'voxreel_sentence_cache_requests_total{result="miss"} 4',
          'voxreel_sentence_cache_requests_total{result="hit"} 2',
          `voxreel_sentence_cache_bytes ${cache.bytes}`,
        ]),
      );
      expect(cache.bytes).toBeGreaterThan(4 * 2 * 10_000);
    } finally {
      synthesizer.close();
    }
  });

  it('tells a spoken speed from another: the same text faster is spoken again', async () => {
    const engine = new CountingSpeaker(espeak);
    const synthesizer = synthesizerOn(engine, new SentenceCache(64 * 1024 * 1024));
    try {
      await synthesizer.speak({ text: ORIGINAL, voice: synthesizer.voiceOf(VOICE) }, synthesizer.budget('audio'));
      await synthesizer.speak({ text: ORIGINAL, voice: synthesizer.voiceOf(VOICE), speed: 1.25 }, synthesizer.budget('audio'));
      await synthesizer.speak({ text: ORIGINAL, voice: synthesizer.voiceOf(VOICE), speed: 1.25 }, synthesizer.budget('audio'));
      expect(engine.calls).toHaveLength(6);
    } finally {
      synthesizer.close();
    }
  });

  it('is off at 0 bytes: every sentence is spoken, nothing is kept or counted', async () => {
    const engine = new CountingSpeaker(espeak);
    const cache = new SentenceCache(0);
    const metrics = new Metrics(() => new Limiter({ concurrency: 1, queueLength: 0 }).stats, { sentenceCache: cache });
    const synthesizer = synthesizerOn(engine, cache, metrics);
    try {
      await synthesizer.speak({ text: ORIGINAL, voice: synthesizer.voiceOf(VOICE) }, synthesizer.budget('audio'));
      await synthesizer.speak({ text: ORIGINAL, voice: synthesizer.voiceOf(VOICE) }, synthesizer.budget('audio'));
      expect(engine.calls).toHaveLength(6);
      expect(cache.size).toBe(0);
      expect(cache.bytes).toBe(0);
      expect(await sentenceSeries(metrics)).toEqual(['voxreel_sentence_cache_bytes 0']);
    } finally {
      synthesizer.close();
    }
    // Off, the caller's own signal goes to the engine.
    const signal = new AbortController().signal;
    await speakOn(cache, engine, 'Hello there.', signal);
    expect(engine.calls.at(-1)?.signal).toBe(signal);
  });

  it('keeps nothing of a synthesis aborted by its request, and speaks it afresh next time', async () => {
    const engine = new CountingSpeaker(espeak);
    const cache = new SentenceCache(64 * 1024 * 1024);
    const synthesizer = synthesizerOn(engine, cache);
    const text = 'This sentence is stopped while it is being spoken.';
    try {
      const controller = new AbortController();
      engine.onCall = () => controller.abort();
      await expect(synthesizer.speak({ text, voice: synthesizer.voiceOf(VOICE), signal: controller.signal }, synthesizer.budget('audio'))).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
      expect(engine.calls).toHaveLength(1);
      expect(engine.calls[0]?.signal?.aborted).toBe(true);
      await expect(engine.calls[0]?.result).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
      expect(cache.size).toBe(0);
      expect(cache.bytes).toBe(0);

      engine.onCall = undefined;
      const speech = await synthesizer.speak({ text, voice: synthesizer.voiceOf(VOICE) }, synthesizer.budget('audio'));
      expect(speech.samples.length).toBeGreaterThan(10_000);
      expect(engine.calls).toHaveLength(2);
      await synthesizer.speak({ text, voice: synthesizer.voiceOf(VOICE) }, synthesizer.budget('audio'));
      expect(engine.calls).toHaveLength(2);
    } finally {
      synthesizer.close();
    }
  });
});

describe('SentenceCache', () => {
  it('drops the least recently used sentences once their bytes pass the limit', async () => {
    const engine = new CountingSpeaker(espeak);
    const [a, b, c] = ['Apples are red.', 'Bananas are long and yellow.', 'Cherries grow in pairs on the tree.'];
    // Sizes as the cache counts them, measured on a cache large enough for all three.
    const probe = new SentenceCache(64 * 1024 * 1024);
    const sizes: number[] = [];
    for (const text of [a, b, c] as string[]) {
      const before = probe.bytes;
      await speakOn(probe, engine, text);
      sizes.push(probe.bytes - before);
    }
    const [sizeA, sizeB, sizeC] = sizes as [number, number, number];
    expect(Math.min(sizeA, sizeB, sizeC)).toBeGreaterThan(10_000);

    // Room for any two of them, not for all three (eSpeak NG may make a sentence a few samples longer or shorter).
    const cache = new SentenceCache(sizeA + sizeC + Math.round(sizeB / 2));
    const calls = engine.calls.length;
    expect((await speakOn(cache, engine, a as string)).hit).toBe(false);
    expect((await speakOn(cache, engine, b as string)).hit).toBe(false);
    expect(cache.size).toBe(2);
    // A is used again: B is now the least recently used, and goes when C comes.
    expect((await speakOn(cache, engine, a as string)).hit).toBe(true);
    expect((await speakOn(cache, engine, c as string)).hit).toBe(false);
    expect(cache.size).toBe(2);
    expect((await speakOn(cache, engine, a as string)).hit).toBe(true);
    expect((await speakOn(cache, engine, c as string)).hit).toBe(true);
    expect(engine.texts(calls)).toEqual([a, b, c]);
    expect((await speakOn(cache, engine, b as string)).hit).toBe(false);
    expect(engine.texts(calls)).toEqual([a, b, c, b]);
    expect(cache.bytes).toBeLessThanOrEqual(cache.maxBytes);
  });

  it('does not keep a sentence larger than the whole cache', async () => {
    const engine = new CountingSpeaker(espeak);
    const cache = new SentenceCache(1000);
    expect((await speakOn(cache, engine, 'Too long to keep.')).hit).toBe(false);
    expect((await speakOn(cache, engine, 'Too long to keep.')).hit).toBe(false);
    expect(engine.calls).toHaveLength(2);
    expect(cache.size).toBe(0);
  });

  it('hands out copies: what a caller does to its audio does not reach the cache', async () => {
    const engine = new CountingSpeaker(espeak);
    const cache = new SentenceCache(64 * 1024 * 1024);
    const first = await speakOn(cache, engine, 'A sentence to tamper with.');
    const pristine = first.chunk.samples.slice();
    const firstStart = first.chunk.words?.[0]?.start;
    first.chunk.samples.fill(0);
    if (first.chunk.words?.[0]) first.chunk.words[0].start = 99;
    const second = await speakOn(cache, engine, 'A sentence to tamper with.');
    expect(second.hit).toBe(true);
    expect(Buffer.from(second.chunk.samples.buffer).equals(Buffer.from(pristine.buffer))).toBe(true);
    expect(second.chunk.words?.[0]?.start).toBe(firstStart);
    expect(engine.calls).toHaveLength(1);
  });

  it('shares one synthesis between identical sentences spoken at once', async () => {
    const engine = new CountingSpeaker(espeak);
    const cache = new SentenceCache(64 * 1024 * 1024);
    const [one, two] = await Promise.all([speakOn(cache, engine, 'Said twice at once.'), speakOn(cache, engine, 'Said twice at once.')]);
    expect(engine.calls).toHaveLength(1);
    expect([one.hit, two.hit]).toEqual([false, true]);
    expect(Buffer.from(one.chunk.samples.buffer).equals(Buffer.from(two.chunk.samples.buffer))).toBe(true);
    expect(one.chunk.samples).not.toBe(two.chunk.samples);
  });

  it('goes on for a caller that did not abort when another sharing the synthesis did', async () => {
    const engine = new CountingSpeaker(espeak);
    const cache = new SentenceCache(64 * 1024 * 1024);
    const leaving = new AbortController();
    const left = speakOn(cache, engine, 'One caller leaves, one stays.', leaving.signal);
    const stayed = speakOn(cache, engine, 'One caller leaves, one stays.');
    leaving.abort();
    await expect(left).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    const result = await stayed;
    expect(result.chunk.samples.length).toBeGreaterThan(10_000);
    expect(engine.calls).toHaveLength(1);
    expect(engine.calls[0]?.signal?.aborted).toBe(false);
    expect(cache.size).toBe(1);
  });

  it('stops the synthesis when every caller sharing it aborted, keeps nothing, and starts afresh for the next', async () => {
    const engine = new CountingSpeaker(espeak);
    const cache = new SentenceCache(64 * 1024 * 1024);
    const first = new AbortController();
    const second = new AbortController();
    const calls = [
      speakOn(cache, engine, 'Everyone leaves before the end.', first.signal),
      speakOn(cache, engine, 'Everyone leaves before the end.', second.signal),
    ];
    first.abort();
    expect(engine.calls[0]?.signal?.aborted).toBe(false);
    second.abort();
    expect(engine.calls[0]?.signal?.aborted).toBe(true);
    for (const call of calls) await expect(call).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    await expect(engine.calls[0]?.result).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    expect(cache.size).toBe(0);

    const again = await speakOn(cache, engine, 'Everyone leaves before the end.');
    expect(again.hit).toBe(false);
    expect(engine.calls).toHaveLength(2);
    expect(cache.size).toBe(1);
  });

  it('keeps nothing of a failed synthesis: the next request asks the engine again', async () => {
    const engine = new CountingSpeaker(faulty);
    const cache = new SentenceCache(64 * 1024 * 1024);
    const key = keyOf('FAULT:segfault');
    const speak = () => cache.speak(key, (signal) => engine.synthesize(VOICE, 'FAULT:segfault', { signal }));
    await expect(speak()).rejects.toMatchObject({ code: 'ENGINE_FAILED' });
    await expect(speak()).rejects.toMatchObject({ code: 'ENGINE_FAILED' });
    expect(engine.calls).toHaveLength(2);
    expect(cache.size).toBe(0);
    // The engine is well again (a fresh process) and its answers are kept.
    await cache.speak(keyOf('Well again.'), (signal) => engine.synthesize(VOICE, 'Well again.', { signal }));
    expect(cache.size).toBe(1);
  });

  it('rejects at once with the reason of a signal aborted before it starts', async () => {
    const engine = new CountingSpeaker(espeak);
    const cache = new SentenceCache(64 * 1024 * 1024);
    const controller = new AbortController();
    controller.abort();
    await expect(speakOn(cache, engine, 'Never spoken.', controller.signal)).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    expect(engine.calls).toHaveLength(0);
  });
});
