import { fixture } from '../helpers/fixtures.js';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { rms } from '../../src/speech/pcm.js';
import type { SpeechChunk } from '../../src/engines/index.js';
import { RhvoiceEngine } from '../../src/engines/rhvoice/engine.js';

// CI installs RHVoice (.ci/run): there, a missing library is a failure rather than a skip.
const installed = existsSync('/usr/lib/x86_64-linux-gnu/libRHVoice.so.5') || existsSync('/usr/lib/aarch64-linux-gnu/libRHVoice.so.5');
const run = installed || Boolean(process.env.CI);

const SENTENCE = 'The quick brown fox jumps over the lazy dog.';
const TRICKY = 'Tom & Jerry café — naïve 😀 done. Hello "world", x-ray 1234 don\'t (test).';

function expectSpeech(chunk: SpeechChunk, seconds: [number, number]): void {
  expect(chunk.sampleRate).toBe(24000);
  expect(chunk.samples).toBeInstanceOf(Int16Array);
  const duration = chunk.samples.length / chunk.sampleRate;
  expect(duration).toBeGreaterThan(seconds[0]);
  expect(duration).toBeLessThan(seconds[1]);
  expect(rms(chunk.samples)).toBeGreaterThan(0.01);
}

/** Every word timed, in order, within the audio, its text where its offsets say. */
function expectWords(text: string, chunk: SpeechChunk, expected: readonly string[]): void {
  const words = chunk.words ?? [];
  const duration = chunk.samples.length / chunk.sampleRate;
  expect(words.map((word) => word.word)).toEqual(expected);
  words.forEach((word, index) => {
    expect(text.slice(word.textOffset, word.textOffset + word.textLength)).toBe(word.word);
    expect(word.end).toBeGreaterThanOrEqual(word.start);
    expect(word.end).toBeLessThanOrEqual(duration);
    const previous = words[index - 1];
    if (previous) {
      expect(word.start).toBeGreaterThanOrEqual(previous.end);
      expect(word.textOffset).toBeGreaterThan(previous.textOffset);
    }
  });
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe.skipIf(!run)('RHVoice', () => {
  let engine: RhvoiceEngine;

  beforeAll(async () => {
    engine = await RhvoiceEngine.create({ poolSize: 1, jobTimeoutMs: 30_000 });
  }, 60_000);

  afterAll(async () => {
    await engine?.close();
  });

  it('lists the four English voices it may offer, and no others', async () => {
    const voices = await engine.listVoices();
    expect(voices.map((voice) => voice.id)).toEqual(['rhvoice:alan', 'rhvoice:bdl', 'rhvoice:clb', 'rhvoice:slt']);
    expect(engine.findVoice('RHVOICE:CLB')).toMatchObject({ language: 'en-US', gender: 'female', sampleRate: 24000, wordTimings: true });
    expect(engine.findVoice('rhvoice:bdl')).toMatchObject({ language: 'en-US', gender: 'male' });
    expect(engine.findVoice('rhvoice:alan')).toMatchObject({ language: 'en-GB-scotland', gender: 'male' });
    expect(engine.findVoice('rhvoice:lyubov')).toBeUndefined();
    expect(engine.findVoice('rhvoice:evgeniy-eng')).toBeUndefined();
    expect((await failure(engine.synthesize('rhvoice:lyubov', SENTENCE))).code).toBe('UNKNOWN_VOICE');
  });

  it.each(['alan', 'bdl', 'clb', 'slt'])('speaks a sentence with %s, every word timed in order', async (voice) => {
    const chunk = await engine.synthesize(`rhvoice:${voice}`, SENTENCE);
    expectSpeech(chunk, [1.5, 6]);
    expectWords(SENTENCE, chunk, ['The', 'quick', 'brown', 'fox', 'jumps', 'over', 'the', 'lazy', 'dog']);
  });

  it('maps word offsets back through multi-byte characters and punctuation', async () => {
    const chunk = await engine.synthesize('rhvoice:slt', TRICKY);
    expectSpeech(chunk, [3, 15]);
    // The emoji is never given to the engine (sanitizeText blanks it).
    expectWords(TRICKY, chunk, ['Tom', '&', 'Jerry', 'café', '—', 'naïve', 'done', 'Hello', 'world', 'x-ray', '1234', "don't", 'test']);
  });

  it('offsets words into the text as given, control characters included', async () => {
    const text = '\u0001Hello\u0000 world';
    const chunk = await engine.synthesize('rhvoice:clb', text);
    expectWords(text, chunk, ['Hello', 'world']);
  });
});

describe.skipIf(!run)('RHVoice host faults', () => {
  let engine: RhvoiceEngine;

  beforeAll(async () => {
    engine = await RhvoiceEngine.create({ poolSize: 1, jobTimeoutMs: 2000, hostModule: fixture('faulty-rhvoice-host.ts') });
  }, 60_000);

  afterAll(async () => {
    await engine?.close();
  });

  it.each(['segfault', 'abort', 'exit'])('fails only the call whose host dies (%s), then works again', async (fault) => {
    const [pid] = engine.pids();
    expect((await failure(engine.synthesize('rhvoice:slt', `FAULT:${fault}`))).code).toBe('ENGINE_FAILED');
    expectSpeech(await engine.synthesize('rhvoice:slt', SENTENCE), [1.5, 6]);
    expect(engine.pids()).not.toContain(pid);
  });

  it('times out a hung host and works again', async () => {
    expect((await failure(engine.synthesize('rhvoice:slt', 'FAULT:hang'))).code).toBe('JOB_TIMEOUT');
    expectSpeech(await engine.synthesize('rhvoice:slt', SENTENCE), [1.5, 6]);
  });
});
