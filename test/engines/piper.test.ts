import { fixture } from '../helpers/fixtures.js';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppError, cancelReason } from '../../src/errors.js';
import type { SpeechChunk, WordTiming } from '../../src/engines/types.js';
import { durationsFile, modelDurations, PiperVoiceCatalog } from '../../src/engines/piper/catalog.js';
import { PiperEngine } from '../../src/engines/piper/engine.js';
import { findDurationsTensor, graphOutputSuffix } from '../../src/engines/piper/onnx-durations.js';
import { noiseTable, seedNoise } from '../../src/engines/onnx/seeded-noise.js';
import { MAX_IDS, splitSentence } from '../../src/engines/piper/synthesis.js';
import { piperWordTimings } from '../../src/engines/piper/words.js';
import { resolveVoice } from '../../src/http/openai-compat.js';
import { rms } from '../../src/speech/pcm.js';
import { postTts, useTestApp } from '../helpers/helpers.js';
import { probe } from '../helpers/media.js';
import { isAlive } from '../helpers/process-table.js';
import { useTempDir } from '../helpers/temp-dir.js';

const VOICES_DIR = fileURLToPath(new URL('../../voices', import.meta.url));
const VOICE = 'piper:en_US-joe-medium';
const MODEL = path.join(VOICES_DIR, 'en_US-joe-medium.onnx');
const installed = existsSync(MODEL) && existsSync(`${MODEL}.json`);
if (!installed) {
  console.warn(`piper.test.ts skipped: ${MODEL} (and its .onnx.json) is not installed; \`npm run voices -- add en_US-joe-medium\` installs it.`);
}

const SENTENCE = 'The quick brown fox jumps over the lazy dog, then rests in the warm afternoon sun.';
const TRICKY = 'Tom & Jerry <3 café — naïve 😀 done. Hello "world", x-ray 1234 don\'t (test).';
/** About 900 ids: more than one inference may take. */
const LONG_SENTENCE =
  'When the morning fog finally lifted over the harbour, the fishermen who had waited since dawn untied their boats, ' +
  'checked their nets and engines one last time, called out to the children watching from the sea wall, and steered ' +
  'slowly past the lighthouse towards the open water where the mackerel had been running for a week, while the gulls ' +
  'circled overhead and the bakery on the corner began to fill the narrow streets with the smell of fresh bread.';

const seconds = (chunk: SpeechChunk) => chunk.samples.length / chunk.sampleRate;
const bytesOf = (chunk: SpeechChunk) => Buffer.from(chunk.samples.buffer, chunk.samples.byteOffset, chunk.samples.byteLength);

/** Every word-like piece of `text`, in order. */
function wordsOf(text: string): string[] {
  return [...new Intl.Segmenter('en', { granularity: 'word' }).segment(text)].filter((piece) => piece.isWordLike).map((piece) => piece.segment);
}

/** Timings that point at their own text, run in order, stay inside the audio, and include `expected` in order. */
function expectTimedInOrder(text: string, words: readonly WordTiming[], duration: number, expected: readonly string[]): void {
  let previous: WordTiming | undefined;
  for (const word of words) {
    expect(text.substr(word.textOffset, word.textLength)).toBe(word.word);
    expect(word.end).toBeGreaterThanOrEqual(word.start);
    expect(word.end).toBeLessThanOrEqual(duration + 0.001);
    if (previous) {
      expect(word.textOffset).toBeGreaterThanOrEqual(previous.textOffset + previous.textLength);
      expect(word.start).toBeGreaterThanOrEqual(previous.end - 0.001);
    }
    previous = word;
  }
  const said = words.map((word) => word.word);
  let from = 0;
  for (const word of expected) {
    const at = said.indexOf(word, from);
    expect(at, `${word} in ${said.join('|')}`).toBeGreaterThanOrEqual(0);
    from = at + 1;
  }
}

async function failureOf(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe.runIf(installed)('Piper voice catalog', () => {
  const dir = useTempDir('voxreel-piper-');

  /** A voice named `name` in `dir`: the real model linked, its config changed by `edit`. */
  async function addVoice(name: string, edit: (config: Record<string, unknown>) => void, folder = dir): Promise<void> {
    const config = JSON.parse(await readFile(`${MODEL}.json`, 'utf8')) as Record<string, unknown>;
    edit(config);
    await mkdir(folder, { recursive: true });
    await symlink(MODEL, path.join(folder, `${name}.onnx`));
    await writeFile(path.join(folder, `${name}.onnx.json`), JSON.stringify(config));
  }

  beforeAll(async () => {
    await addVoice('en_US-duo-medium', (config) => Object.assign(config, { dataset: 'duo', num_speakers: 2, speaker_id_map: { bob: 1, alice: 0 } }), path.join(dir, 'duo'));
    await addVoice('en_GB-hfc_female-low', (config) => Object.assign(config, { dataset: 'hfc_female', language: { code: 'en_GB' }, audio: { sample_rate: 16000, quality: 'low' } }));
    await addVoice('text-voice', (config) => Object.assign(config, { phoneme_type: 'text' }));
    await writeFile(path.join(dir, 'broken.onnx'), 'x');
    await writeFile(path.join(dir, 'broken.onnx.json'), '{ not json');
    await writeFile(path.join(dir, 'orphan.onnx'), 'no config beside it');
    // Not a model at all: listed, without word timings (nothing to find durations in); its card states a gender.
    await writeFile(path.join(dir, 'de_DE-plain-x_low.onnx'), 'not protobuf');
    await copyFile(`${MODEL}.json`, path.join(dir, 'de_DE-plain-x_low.onnx.json'));
    await writeFile(path.join(dir, 'de_DE-plain-x_low.MODEL_CARD'), '# Model card for plain\n\n* Gender: male\n');
  });

  it('lists one voice per speaker, reads names, languages, genders and qualities, and skips what it cannot use', async () => {
    const catalog = await PiperVoiceCatalog.scan(dir);
    const voices = catalog.list().sort((a, b) => a.id.localeCompare(b.id));
    expect(voices.map((voice) => voice.id)).toEqual([
      'piper:de_DE-plain-x_low',
      'piper:en_GB-hfc_female-low',
      'piper:en_US-duo-medium#alice',
      'piper:en_US-duo-medium#bob',
    ]);
    expect(catalog.find('PIPER:EN_US-DUO-MEDIUM#BOB')).toMatchObject({
      voice: { name: 'Duo bob (Piper, medium), US English', language: 'en-US', gender: null, quality: 'medium', wordTimings: true },
      speakerId: 1,
      model: { multiSpeaker: true, durations: { name: '/Ceil_output_0', isOutput: false } },
    });
    expect(catalog.find('piper:en_US-duo-medium#alice')?.speakerId).toBe(0);
    expect(catalog.find('piper:en_US-duo-medium')).toBeUndefined();
    expect(catalog.find('piper:en_GB-hfc_female-low')?.voice).toEqual({
      id: 'piper:en_GB-hfc_female-low',
      name: 'Hfc Female (Piper, low), UK English',
      language: 'en-GB',
      gender: 'female',
      engine: 'piper',
      sampleRate: 16000,
      wordTimings: true,
      phonemes: true,
      naturalSpeed: true,
      quality: 'low',
    });
    // The config says joe and en_US: it wins over the file name.
    expect(catalog.find('piper:de_DE-plain-x_low')?.voice).toMatchObject({ name: 'Joe (Piper, medium), US English', gender: 'male', wordTimings: false });
    expect(catalog.skipped.map((skipped) => path.basename(skipped.file)).sort()).toEqual(['broken.onnx', 'text-voice.onnx']);
    expect(catalog.skipped.find((skipped) => skipped.file.endsWith('text-voice.onnx'))?.reason).toContain('phoneme_type');
  });

  it('has no voices, and starts no process, without a voices folder', async () => {
    expect((await PiperVoiceCatalog.scan(path.join(dir, 'missing'))).size).toBe(0);
    const engine = await PiperEngine.create({ voicesDir: path.join(dir, 'missing'), poolSize: 2 });
    expect(await engine.listVoices()).toEqual([]);
    expect(engine.pids()).toEqual([]);
    expect(engine.findVoice(VOICE)).toBeUndefined();
    await engine.close();
  });
});

describe.runIf(installed)('Piper durations output', () => {
  const dir = useTempDir('voxreel-onnx-');
  /** A length-delimited protobuf field. */
  const field = (number: number, ...parts: (string | Buffer)[]) => {
    const payload = Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));
    return Buffer.concat([Buffer.from([number * 8 + 2, payload.length]), payload]);
  };
  const ceil = (output: string) => field(1, field(2, output), field(4, 'Ceil'));
  const model = async (name: string, bytes: Buffer) => {
    await writeFile(path.join(dir, name), bytes);
    return path.join(dir, name);
  };

  it('finds the one Ceil tensor, and gives none when there are several or the file is no model', async () => {
    expect(findDurationsTensor(MODEL)).toEqual({ name: '/Ceil_output_0', isOutput: false });
    const one = Buffer.concat([field(7, ceil('frames'), field(1, field(2, 'audio'), field(4, 'Conv')))]);
    expect(findDurationsTensor(await model('one.onnx', one))).toEqual({ name: 'frames', isOutput: false });
    expect(findDurationsTensor(await model('added.onnx', Buffer.concat([one, graphOutputSuffix('frames')])))).toEqual({ name: 'frames', isOutput: true });
    expect(findDurationsTensor(await model('two.onnx', field(7, ceil('a'), ceil('b'))))).toBeUndefined();
    expect(findDurationsTensor(await model('garbage.onnx', Buffer.from([0x3a, 0xff, 0xff])))).toBeUndefined();
  });

  it('remembers the tensor beside the model, by its size and time, so that a start reads no graph', async () => {
    const file = await model('kept.onnx', field(7, ceil('frames')));
    expect(await modelDurations(file)).toEqual({ name: 'frames', isOutput: false });
    const { size, mtimeMs } = await stat(file);
    expect(JSON.parse(await readFile(durationsFile(file), 'utf8'))).toEqual({ size, mtimeMs, durations: { name: 'frames', isOutput: false } });
    // What is remembered is believed while the model's size and time match: the graph is not read again.
    await writeFile(durationsFile(file), JSON.stringify({ size, mtimeMs, durations: { name: 'remembered', isOutput: true } }));
    expect(await modelDurations(file)).toEqual({ name: 'remembered', isOutput: true });
    // A model replaced (another time) is read again: this one has two Ceil nodes, so no durations.
    await writeFile(file, field(7, ceil('a'), ceil('b')));
    await utimes(file, new Date(), new Date(mtimeMs + 5000));
    expect(await modelDurations(file)).toBeNull();
    expect(JSON.parse(await readFile(durationsFile(file), 'utf8'))).toMatchObject({ durations: null });
  });
});

describe.runIf(installed)('Piper long sentences and word mapping', () => {
  it('cuts a sentence into runs of at most MAX_IDS ids, after a clause where it can', async () => {
    const { phoneme_id_map: map } = JSON.parse(await readFile(`${MODEL}.json`, 'utf8')) as { phoneme_id_map: Record<string, number[]> };
    const clause = [...'ðə kwˈɪk bɹˈaʊn fˈɑːks dʒˈʌmps ˌoʊvɚ ðə lˈeɪzi dˈɑːɡ, '];
    const phonemes = Array.from({ length: 12 }, () => clause).flat();
    const pieces = splitSentence(phonemes, map);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces[0]?.[0]).toBe(0);
    expect(pieces.at(-1)?.[1]).toBe(phonemes.length);
    for (const [index, [from, to]] of pieces.entries()) {
      expect(3 + 2 * (to - from)).toBeLessThanOrEqual(MAX_IDS);
      if (index > 0) expect(pieces[index - 1]?.[1]).toBe(from);
      if (to < phonemes.length) expect(phonemes.slice(to - 2, to).join('')).toBe(', ');
    }
    // No pause, no space: a hard cut still keeps each run small enough.
    const unbroken = splitSentence(Array.from({ length: 1000 }, () => 'a'), map);
    expect(unbroken.every(([from, to]) => 3 + 2 * (to - from) <= MAX_IDS)).toBe(true);
  });

  it('gives eSpeak words to the words of the text: numbers merged, marks read out kept, run-together words shared', () => {
    const text = 'Pay $1,234.50 & go from there.';
    const timings = piperWordTimings(
      text,
      'en-US',
      [
        { textOffset: 0, start: 0, end: 100 },
        { textOffset: 4, start: 100, end: 200 }, // "$" is said after the number, but starts the token
        { textOffset: 7, start: 200, end: 300 },
        { textOffset: 11, start: 300, end: 400 },
        { textOffset: 14, start: 400, end: 500 },
        { textOffset: 16, start: 500, end: 600 },
        { textOffset: 19, start: 600, end: 800 }, // "from the" said as one word
      ],
      100,
    );
    expect(timings.map(({ word, start, end }) => [word, start, end])).toEqual([
      ['Pay', 0, 1],
      ['1,234.50', 1, 4],
      ['&', 4, 5],
      ['go', 5, 6],
      ['from', 6, 6 + (2 * 4) / 9],
      ['there', 6 + (2 * 4) / 9, 8],
    ]);
  });
});

describe.runIf(installed)('Piper engine', () => {
  let engine: PiperEngine;
  const seen = new Set<number>();
  const running = () => {
    for (const pid of engine.pids()) seen.add(pid);
    return engine.pids();
  };

  beforeAll(async () => {
    // The real host, which misbehaves only on texts that ask it to (see fixtures/engine-faults.ts).
    engine = await PiperEngine.create({ voicesDir: VOICES_DIR, poolSize: 1, hostModule: fixture('faulty-piper-host.ts') });
  });

  afterAll(async () => {
    await engine?.close();
    await vi.waitFor(() => expect([...seen].filter(isAlive)).toEqual([]), { timeout: 5000 });
  });

  it('lists the installed voice', async () => {
    expect(await engine.listVoices()).toEqual([
      {
        id: VOICE,
        name: 'Joe (Piper, medium), US English',
        language: 'en-US',
        gender: null,
        engine: 'piper',
        sampleRate: 22050,
        wordTimings: true,
        phonemes: true,
        naturalSpeed: true,
        quality: 'medium',
      },
    ]);
    expect(engine.findVoice('PIPER:en_us-JOE-medium')?.id).toBe(VOICE);
    await expect(engine.synthesize('piper:nobody', 'Hi.')).rejects.toMatchObject({ code: 'UNKNOWN_VOICE' });
  });

  it('loads the model once per process: the first sentence pays for it, the next ones do not', async () => {
    let started = performance.now();
    const first = await engine.synthesize(VOICE, SENTENCE);
    const firstMs = performance.now() - started;
    started = performance.now();
    const second = await engine.synthesize(VOICE, SENTENCE);
    const secondMs = performance.now() - started;
    expect(secondMs).toBeLessThan(firstMs);
    expect(seconds(second)).toBeGreaterThan(seconds(first) * 0.8);
    const stats = await engine.hostStats();
    expect(stats).toMatchObject({ loads: 1, models: [MODEL] });
    expect(running()).toEqual([stats.pid]);
  });

  it('loads the start-up voice (WARM_VOICE) as its process starts, before any job; a voice it lacks loads nothing', async () => {
    for (const [warmVoice, models] of [
      ['auto', [MODEL]],
      [VOICE, [MODEL]],
      ['espeak-ng:en-us', []],
      [undefined, []],
    ] as const) {
      const starting = await PiperEngine.create({ voicesDir: VOICES_DIR, poolSize: 1, warmVoice });
      try {
        // The first job it is sent is this one: whatever it holds, it took on its own.
        expect(await starting.hostStats()).toMatchObject({ loads: models.length, models });
      } finally {
        await starting.close();
      }
    }
  });

  it('speaks a sentence at 22050 Hz, every word timed in order up to the end of the audio', async () => {
    const chunk = await engine.synthesize(VOICE, SENTENCE);
    expect(chunk.sampleRate).toBe(22050);
    expect(seconds(chunk)).toBeGreaterThan(3);
    expect(seconds(chunk)).toBeLessThan(8);
    expect(rms(chunk.samples)).toBeGreaterThan(0.05);
    const words = chunk.words ?? [];
    expect(words.map((word) => word.word)).toEqual(wordsOf(SENTENCE));
    expectTimedInOrder(SENTENCE, words, seconds(chunk), []);
    expect(words[0]?.start).toBeLessThan(0.2);
    expect(seconds(chunk) - (words.at(-1)?.end ?? 0)).toBeLessThan(0.3);
    // Sound where the words are: each word is louder than the quiet between clauses.
    const rate = chunk.sampleRate;
    const loudness = (word: WordTiming) => rms(chunk.samples.subarray(Math.round(word.start * rate), Math.round(word.end * rate)));
    expect(Math.min(...words.map(loudness))).toBeGreaterThan(0.02);
  });

  it('says a sentence the same every time, in this process and in a fresh one (its noise from a seeded table), and varied within it', async () => {
    const { model, replaced } = seedNoise(await readFile(MODEL));
    expect(replaced).toBe(2);
    expect(seedNoise(model).replaced).toBe(0);
    const first = await engine.synthesize(VOICE, SENTENCE);
    const again = await engine.synthesize(VOICE, SENTENCE);
    const other = await PiperEngine.create({ voicesDir: VOICES_DIR, poolSize: 1 });
    try {
      const fresh = await other.synthesize(VOICE, SENTENCE);
      expect(bytesOf(again).equals(bytesOf(first))).toBe(true);
      expect(bytesOf(fresh).equals(bytesOf(first))).toBe(true);
    } finally {
      await other.close();
    }
    // Still noise, not silence put in its place: the table is standard normal.
    const table = new Float32Array(noiseTable().buffer.slice(0));
    const mean = table.reduce((sum, value) => sum + value, 0) / table.length;
    const variance = table.reduce((sum, value) => sum + (value - mean) ** 2, 0) / table.length;
    expect(Math.abs(mean)).toBeLessThan(0.01);
    expect(Math.abs(variance - 1)).toBeLessThan(0.01);
  });

  it('maps words back to the text as sent: marks, emoji, quotes, numbers', async () => {
    const chunk = await engine.synthesize(VOICE, TRICKY);
    expectTimedInOrder(TRICKY, chunk.words ?? [], seconds(chunk), ['Tom', '&', 'Jerry', 'café', 'naïve', 'done', 'Hello', 'world', '1234', "don't", 'test']);
  });

  it('speaks faster through its length scale at speed 2, words included', async () => {
    const [normal, fast] = await Promise.all([engine.synthesize(VOICE, SENTENCE), engine.synthesize(VOICE, SENTENCE, { speed: 2 })]);
    // Not exactly half: each id lasts a whole number of frames, at least one, and the durations are sampled.
    for (const ratio of [seconds(fast!) / seconds(normal!), (fast!.words!.at(-1)?.end ?? 0) / (normal!.words!.at(-1)?.end ?? 1)]) {
      expect(ratio).toBeGreaterThan(0.42);
      expect(ratio).toBeLessThan(0.75);
    }
    expect(fast!.words).toHaveLength(normal!.words!.length);
  });

  it('speaks a sentence too long for one inference in several, timing all of it', async () => {
    const chunk = await engine.synthesize(VOICE, LONG_SENTENCE);
    expect(seconds(chunk)).toBeGreaterThan(18);
    expect(seconds(chunk)).toBeLessThan(45);
    expect(chunk.words?.map((word) => word.word)).toEqual(wordsOf(LONG_SENTENCE));
    expectTimedInOrder(LONG_SENTENCE, chunk.words ?? [], seconds(chunk), []);
  });

  it('answers a text with nothing to say with no sound', async () => {
    const chunk = await engine.synthesize(VOICE, '  ');
    expect(rms(chunk.samples)).toBeLessThan(0.001);
  });

  it.each(['segfault', 'garbage'])('fails only the call whose host %s, then speaks again', async (fault) => {
    const before = running();
    expect((await failureOf(engine.synthesize(VOICE, `FAULT:${fault}`))).code).toBe('ENGINE_FAILED');
    await vi.waitFor(() => expect(before.filter(isAlive)).toEqual([]), { timeout: 5000 });
    const chunk = await engine.synthesize(VOICE, 'Back again.');
    expect(chunk.words?.map((word) => word.word)).toEqual(['Back', 'again']);
    expect((await engine.hostStats()).loads).toBe(1);
    running();
  });

  it('runs several jobs at once in its one process, the model loaded once', async () => {
    const [pid] = running();
    const sentences = ['One sentence here.', 'Another one there.', 'A third, a little longer than the others.', 'And the last.'];
    const chunks = await Promise.all(sentences.map((sentence) => engine.synthesize(VOICE, sentence)));
    for (const [index, chunk] of chunks.entries()) expect(chunk.words?.map((word) => word.word)).toEqual(wordsOf(sentences[index] as string));
    expect(running()).toEqual([pid]);
    expect(await engine.hostStats()).toMatchObject({ pid, loads: 1 });
  });

  it('answers a job given up at once, and keeps the process and the other jobs in it', async () => {
    const [pid] = running();
    const controller = new AbortController();
    const long = engine.synthesize(VOICE, LONG_SENTENCE, { signal: controller.signal });
    const short = engine.synthesize(VOICE, SENTENCE);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const aborted = Date.now();
    controller.abort(cancelReason('CLIENT_CLOSED'));
    expect((await failureOf(long)).code).toBe('CLIENT_CLOSED');
    expect(Date.now() - aborted).toBeLessThan(100);
    expect(seconds(await short)).toBeGreaterThan(3);
    expect(rms((await engine.synthesize(VOICE, 'Still the same process.')).samples)).toBeGreaterThan(0.05);
    expect(running()).toEqual([pid]);
  });

  it('stops a hung host at the deadline, failing the jobs in it, then speaks again', async () => {
    const before = running();
    const bystander = failureOf(engine.synthesize(VOICE, SENTENCE));
    const controller = new AbortController();
    const deadline = setTimeout(() => controller.abort(cancelReason('JOB_TIMEOUT')), 1500);
    const started = Date.now();
    expect((await failureOf(engine.synthesize(VOICE, 'FAULT:hang', { signal: controller.signal }))).code).toBe('JOB_TIMEOUT');
    clearTimeout(deadline);
    expect(Date.now() - started).toBeLessThan(5000);
    // Its event loop is stuck: it answers nothing more, and is killed a few seconds later.
    await vi.waitFor(() => expect(before.filter(isAlive)).toEqual([]), { timeout: 5000 });
    expect((await bystander).code).toBe('ENGINE_FAILED');
    expect(rms((await engine.synthesize(VOICE, 'Still here.')).samples)).toBeGreaterThan(0.05);
    running();
  });
});

describe.runIf(installed)('Piper engine, a job the host cannot do', () => {
  const dir = useTempDir('voxreel-piper-voice-');
  let engine: PiperEngine | undefined;

  afterAll(() => engine?.close());

  it('fails that job alone; the process finishes the others, then gives way to a new one', async () => {
    await symlink(MODEL, path.join(dir, 'en_US-joe-medium.onnx'));
    await copyFile(`${MODEL}.json`, path.join(dir, 'en_US-joe-medium.onnx.json'));
    const config = JSON.parse(await readFile(`${MODEL}.json`, 'utf8')) as { espeak: { voice: string } };
    config.espeak.voice = 'xx-nowhere';
    await symlink(MODEL, path.join(dir, 'en_US-lost-medium.onnx'));
    await writeFile(path.join(dir, 'en_US-lost-medium.onnx.json'), JSON.stringify(config));
    engine = await PiperEngine.create({ voicesDir: dir, poolSize: 2 });
    const before = engine.pids();
    const good = engine.synthesize(VOICE, LONG_SENTENCE);
    const lost = await failureOf(engine.synthesize('piper:en_US-lost-medium', SENTENCE));
    expect(lost.code).toBe('ENGINE_FAILED');
    expect(String((lost.cause as Error).message)).toContain('xx-nowhere');
    expect(seconds(await good)).toBeGreaterThan(18);
    await vi.waitFor(() => expect(before.filter(isAlive)).toEqual([]), { timeout: 5000 });
    expect(rms((await engine.synthesize(VOICE, 'A new process.')).samples)).toBeGreaterThan(0.05);
    expect(engine.pids()).toHaveLength(1);
  });
});

describe.runIf(installed)('Piper through HTTP', () => {
  const t = useTestApp();

  it('lists the voice, and gives it the male OpenAI voice names', async () => {
    expect(t.app.engines.findVoice(VOICE)).toMatchObject({ engine: 'piper', quality: 'medium' });
    // As on a machine without Kokoro, whose voices come first where installed (kokoro.test.ts).
    const withoutKokoro = { findVoice: (id: string) => (id.startsWith('kokoro:') ? undefined : t.app.engines.findVoice(id)) };
    for (const name of ['ash', 'echo', 'onyx', 'verse', 'cedar', 'ballad', 'fable']) expect(resolveVoice(withoutKokoro, name), name).toBe(VOICE);
    expect(resolveVoice(withoutKokoro, 'alloy')).not.toBe(VOICE);
  });

  it('POST /tts makes a real mp3 with every word timed', async () => {
    const text = 'Hello there. This is voxreel, speaking with a neural voice!';
    const result = await postTts(t.app, { text, voice: VOICE, timestamps: true });
    expect(result.voice).toBe(VOICE);
    expect(result.format).toBe('mp3');
    const relative = result.url.slice(t.config.cdnUrl.length + 1);
    const info = await probe(path.join(t.outputDir, relative));
    expect(info.streams[0]?.codecName).toBe('mp3');
    expect(info.duration).toBeGreaterThan(2.5);
    expect(info.duration).toBeLessThan(8);
    const words = result.words ?? [];
    expect(words.map((word) => word.word)).toEqual(text.split(' '));
    for (const [index, word] of words.entries()) {
      expect(text.substr(word.text_offset, word.text_length)).toBe(word.word);
      if (index > 0) expect(word.start).toBeGreaterThanOrEqual(words[index - 1]?.end ?? 0);
    }
    expect(Math.abs((words.at(-1)?.end ?? 0) - result.duration)).toBeLessThan(0.15);
  });

  it('POST /tts speed goes through the voice itself (its length scale), words timed in the file', async () => {
    const text = 'Speed changes the rhythm of a neural voice, not the tempo of its recording.';
    expect(t.app.engines.findVoice(VOICE)?.naturalSpeed).toBe(true);
    const [slow, normal, fast] = await Promise.all([0.5, 1, 2].map((speed) => postTts(t.app, { text, voice: VOICE, format: 'wav', speed, timestamps: true })));
    // Roughly, not exactly: phonemes last whole frames and the model samples its durations (and the file keeps its edges).
    expect(fast!.duration / normal!.duration).toBeGreaterThan(0.42);
    expect(fast!.duration / normal!.duration).toBeLessThan(0.8);
    expect(slow!.duration / normal!.duration).toBeGreaterThan(1.4);
    for (const result of [slow!, normal!, fast!]) {
      expect(result.words).toHaveLength(text.split(' ').length);
      expect(Math.abs((result.words?.at(-1)?.end ?? 0) - result.duration)).toBeLessThan(0.15);
    }
  });
});

describe.runIf(process.env.CI)('Piper on CI', () => {
  it('has the default voice installed (.ci/run installs it)', () => {
    expect(installed).toBe(true);
  });
});
