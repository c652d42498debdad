import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { KokoroEngine } from '../../src/engines/kokoro/engine.js';
import type { SpeechChunk, WordTiming } from '../../src/engines/types.js';
import { resolveVoice } from '../../src/http/openai-compat.js';
import { rms } from '../../src/speech/pcm.js';
import { postTts, useTestApp } from '../helpers/helpers.js';
import { probe } from '../helpers/media.js';

const VOICES_DIR = fileURLToPath(new URL('../../voices', import.meta.url));
const KOKORO_DIR = path.join(VOICES_DIR, 'kokoro');
/** What script/setup installs (npm run voices -- add kokoro kokoro:af_heart kokoro:am_michael kokoro:bf_emma). */
const installed = ['kokoro-v1.0.int8.onnx', 'voices/af_heart.bin', 'voices/am_michael.bin'].every((file) => existsSync(path.join(KOKORO_DIR, file)));
if (!installed) console.warn(`kokoro.test.ts skipped: Kokoro is not installed in ${KOKORO_DIR}; script/setup installs it.`);
/** Under CI, where script/setup installs it, a missing install fails the tests instead of skipping them. */
const run = installed || Boolean(process.env.CI);

const SENTENCE = 'The quick brown fox jumps over the lazy dog.';
const seconds = (chunk: SpeechChunk) => chunk.samples.length / chunk.sampleRate;

/** Timings in order, each on its own text, inside the audio. */
function expectTimed(text: string, words: readonly WordTiming[], duration: number): void {
  let previous: WordTiming | undefined;
  for (const word of words) {
    expect(text.substr(word.textOffset, word.textLength)).toBe(word.word);
    expect(word.end).toBeGreaterThan(word.start);
    expect(word.start).toBeGreaterThanOrEqual(0);
    expect(word.end).toBeLessThanOrEqual(duration + 0.001);
    if (previous) expect(word.start).toBeGreaterThanOrEqual(previous.end - 0.001);
    previous = word;
  }
}

describe.runIf(run)('Kokoro engine', () => {
  let engine: KokoroEngine;
  const heard = new Map<string, Promise<SpeechChunk>>();
  /** One synthesis per voice and speed for the whole file: each costs about a second of CPU. */
  const say = (voice: string, speed = 1) => {
    const key = `${voice} ${speed}`;
    if (!heard.has(key)) heard.set(key, engine.synthesize(voice, SENTENCE, { speed }));
    return heard.get(key) as Promise<SpeechChunk>;
  };

  beforeAll(async () => {
    engine = await KokoroEngine.create({ voicesDir: VOICES_DIR, poolSize: 2 });
  });
  afterAll(() => engine?.close());

  it('lists a voice per pack, with language, gender and what it can do', async () => {
    const voices = await engine.listVoices();
    expect(voices.find((voice) => voice.id === 'kokoro:af_heart')).toEqual({
      id: 'kokoro:af_heart',
      name: 'Heart (Kokoro), US English',
      language: 'en-US',
      gender: 'female',
      engine: 'kokoro',
      sampleRate: 24000,
      wordTimings: true,
      phonemes: true,
      naturalSpeed: true,
      grade: 'A',
    });
    expect(voices.find((voice) => voice.id === 'kokoro:am_michael')).toMatchObject({ gender: 'male', language: 'en-US', grade: 'C+' });
  });

  it('speaks English with af_heart: 24 kHz audio of a plausible length, not silent, every word timed in order inside it', async () => {
    const chunk = await say('kokoro:af_heart');
    expect(chunk.sampleRate).toBe(24000);
    expect(seconds(chunk)).toBeGreaterThan(1.5);
    expect(seconds(chunk)).toBeLessThan(5);
    expect(rms(chunk.samples)).toBeGreaterThan(0.02);
    expect(chunk.words?.map((word) => word.word)).toEqual(['The', 'quick', 'brown', 'fox', 'jumps', 'over', 'the', 'lazy', 'dog']);
    expectTimed(SENTENCE, chunk.words ?? [], seconds(chunk));
    // The words take most of the audio: the timings are the model's own, not spread evenly.
    const words = chunk.words ?? [];
    expect((words.at(-1)?.end ?? 0) - (words[0]?.start ?? 0)).toBeGreaterThan(seconds(chunk) * 0.6);
  });

  it('speaks twice as fast at speed 2, its words still timed', async () => {
    const [normal, fast] = await Promise.all([say('kokoro:af_heart'), say('kokoro:af_heart', 2)]);
    const ratio = seconds(normal) / seconds(fast);
    expect(ratio).toBeGreaterThan(1.7);
    expect(ratio).toBeLessThan(2.2);
    expectTimed(SENTENCE, fast.words ?? [], seconds(fast));
  });

  it('finds blends of installed packs, named in lowest terms, and speaks them unlike either pack', async () => {
    const blend = engine.findVoice('kokoro:AF_HEART(2)+am_michael(2)');
    expect(blend).toMatchObject({ id: 'kokoro:af_heart(1)+am_michael(1)', name: 'Heart 50 %, Michael 50 % (Kokoro blend), US English', gender: null, language: 'en-US' });
    expect(engine.findVoice('kokoro:af_heart+af_nobody')).toBeUndefined();
    const [heart, michael, mixed] = await Promise.all([say('kokoro:af_heart'), say('kokoro:am_michael'), say(blend?.id ?? '')]);
    const differs = (a: SpeechChunk, b: SpeechChunk) => a.samples.length !== b.samples.length || a.samples.some((value, index) => value !== b.samples[index]);
    expect(differs(mixed, heart)).toBe(true);
    expect(differs(mixed, michael)).toBe(true);
    expect(rms(mixed.samples)).toBeGreaterThan(0.02);
  });

  it('says SSML phoneme spans as their IPA, and refuses IPA it has no symbol for', async () => {
    const text = 'Say tomato.';
    const chunk = await engine.synthesize('kokoro:af_heart', text, { phonemes: [{ start: 4, end: 10, ipa: 'təˈmɑːtəʊ' }] });
    expect(chunk.words?.map((word) => word.word)).toEqual(['Say', 'tomato']);
    expect(rms(chunk.samples)).toBeGreaterThan(0.02);
    const refused = await engine.synthesize('kokoro:af_heart', text, { phonemes: [{ start: 4, end: 10, ipa: 'ʘ' }] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'UNSUPPORTED_SSML' });
  });
});

describe.runIf(run)('Kokoro host', () => {
  it('loads the model as it starts when WARM_VOICE names a Kokoro voice, once, in one process on ONNX Runtime 1.32', async () => {
    const engine = await KokoroEngine.create({ voicesDir: VOICES_DIR, poolSize: 2, warmVoice: 'kokoro:af_heart' });
    try {
      let stats = await engine.hostStats();
      for (let waited = 0; !stats.loaded && waited < 30_000; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        stats = await engine.hostStats();
      }
      expect(stats.loaded).toBe(true);
      expect(stats.onnxruntime).toMatchObject({ source: 'pypi', version: '1.32.0', fallback: null });
      await engine.synthesize('kokoro:af_heart', 'One.');
      expect(engine.pids()).toEqual([stats.pid]);
    } finally {
      await engine.close();
    }
    // Another start-up voice, or `auto` (which passes over a heavy engine): nothing loads before a job.
    for (const warmVoice of ['piper:en_US-joe-medium', 'auto']) {
      const lazy = await KokoroEngine.create({ voicesDir: VOICES_DIR, poolSize: 2, warmVoice });
      try {
        await new Promise((resolve) => setTimeout(resolve, 500));
        // Not even its process: that starts with the first job (here the stats asked for).
        expect(lazy.pids(), warmVoice).toEqual([]);
        expect((await lazy.hostStats()).loaded, warmVoice).toBe(false);
      } finally {
        await lazy.close();
      }
    }
  });
});

describe.runIf(run)('Kokoro through the service', () => {
  const t = useTestApp({ CACHE_MAX_ENTRIES: '0', SENTENCE_CACHE_MB: '0' });

  it('ranks Kokoro first, and takes a blend as the voice of a request with word timestamps', async () => {
    expect(t.app.engines.listVoices().find((voice) => voice.recommended && voice.language === 'en-US')?.engine).toBe('kokoro');
    const voice = 'kokoro:af_heart(3)+am_michael(1)';
    expect(t.app.engines.findVoice(voice)?.id).toBe(voice);
    // OpenAI's names go to Kokoro's packs (of their name where installed).
    expect(['alloy', 'echo', 'sage', 'fable'].map((name) => resolveVoice(t.app.engines, name))).toEqual(['kokoro:af_heart', 'kokoro:am_michael', 'kokoro:bf_emma', 'kokoro:am_michael']);
    const text = 'Blends are voices too. They speak at once.';
    const response = await postTts(t.app, { text, voice, format: 'wav', timestamps: true });
    const file = path.join(t.outputDir, response.url.slice(t.config.cdnUrl.length + 1));
    const info = await probe(file);
    expect(info.duration).toBeGreaterThan(2);
    expect(info.duration).toBeLessThan(8);
    const words = response.words ?? [];
    expect(words.map((word) => word.word)).toEqual(['Blends', 'are', 'voices', 'too.', 'They', 'speak', 'at', 'once.']);
    for (const [index, word] of words.entries()) {
      expect(word.end).toBeGreaterThan(word.start);
      expect(word.end).toBeLessThanOrEqual(info.duration + 0.01);
      if (index > 0) expect(word.start).toBeGreaterThanOrEqual((words[index - 1]?.end ?? 0) - 0.01);
    }
  });
});
