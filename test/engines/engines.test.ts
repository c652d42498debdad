import { fixture } from '../helpers/fixtures.js';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppError } from '../../src/errors.js';
import { rms } from '../../src/speech/pcm.js';
import { EspeakEngine } from '../../src/engines/espeak/engine.js';
import { detectFestival, FestivalEngine } from '../../src/engines/festival/engine.js';
import { FliteEngine } from '../../src/engines/flite/engine.js';
import { createEngines, type EngineRegistry, type SpeechChunk } from '../../src/engines/index.js';
import { descendantsOf, isAlive, processesMatching } from '../helpers/process-table.js';

const hasFestival = (await detectFestival()) !== undefined;

const SENTENCE = 'The quick brown fox jumps over the lazy dog.';
const TRICKY = 'Tom & Jerry <3 café — naïve 😀 done. Hello "world", x-ray 1234 don\'t (test).';
// The emoji is never given to an engine (sanitizeText blanks it): no word of its own.
const TRICKY_WORDS = ['Tom', '&', 'Jerry', 'café', 'naïve', 'done', 'Hello', 'world', 'x-ray', '1234', "don't", 'test'];
const LONG = Array.from({ length: 40 }, (_, index) => `Sentence number ${index + 1} is here to make the text long enough.`)
  .join(' ')
  .slice(0, 2500);

function duration(chunk: SpeechChunk): number {
  return chunk.samples.length / chunk.sampleRate;
}

function expectSpeech(chunk: SpeechChunk, sampleRate: number, seconds: [number, number]): void {
  expect(chunk.sampleRate).toBe(sampleRate);
  expect(chunk.samples).toBeInstanceOf(Int16Array);
  expect(duration(chunk)).toBeGreaterThan(seconds[0]);
  expect(duration(chunk)).toBeLessThan(seconds[1]);
  expect(rms(chunk.samples)).toBeGreaterThan(0.01); // about -40 dBFS
}

/** Rejects with an AppError of this code. */
async function expectFailure(promise: Promise<unknown>, code: AppError['code']): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
  return error as AppError;
}

/** vi.waitFor rather than expect.poll: this also runs in afterAll hooks. */
async function expectGone(pids: readonly number[]): Promise<void> {
  await vi.waitFor(() => expect(pids.filter(isAlive)).toEqual([]), { timeout: 5000 });
}

/** Words whose text matches the expected ones in order (others may sit between them). */
function expectWordsInOrder(text: string, chunk: SpeechChunk, expected: readonly string[]): void {
  const words = chunk.words ?? [];
  for (const word of words) {
    expect(text.slice(word.textOffset, word.textOffset + word.textLength)).toBe(word.word);
    expect(word.end).toBeGreaterThanOrEqual(word.start);
    expect(word.end).toBeLessThanOrEqual(duration(chunk) + 0.01);
  }
  for (let index = 1; index < words.length; index++) {
    expect(words[index]?.start).toBeGreaterThanOrEqual(words[index - 1]?.start ?? 0);
    expect(words[index]?.textOffset).toBeGreaterThan(words[index - 1]?.textOffset ?? -1);
  }
  let cursor = 0;
  for (const expectedWord of expected) {
    const found = words.findIndex((word, index) => index >= cursor && word.word === expectedWord);
    expect(found, `word ${expectedWord} in ${words.map((word) => word.word).join('|')}`).toBeGreaterThanOrEqual(0);
    cursor = found + 1;
  }
}

describe('engine registry', () => {
  let engines: EngineRegistry;

  beforeAll(async () => {
    engines = await createEngines({ poolSize: 2, jobTimeoutMs: 60_000 });
  });

  afterAll(async () => {
    await engines?.close();
  });

  it('lists every voice once, sorted by engine then id', () => {
    const voices = engines.listVoices();
    const ids = voices.map((voice) => voice.id);
    expect(new Set(ids).size).toBe(ids.length);
    const keys = voices.map((voice) => `${voice.engine}\u0000${voice.id}`);
    expect(keys).toEqual([...keys].sort());
    const count = (engine: string) => voices.filter((voice) => voice.engine === engine).length;
    expect(count('espeak-ng')).toBeGreaterThan(200);
    expect(count('flite')).toBe(4);
    expect(count('festival')).toBe(hasFestival ? 1 : 0);
  });

  it('describes voices with BCP-47 languages and genders', () => {
    const voice = (id: string) => engines.listVoices().find((candidate) => candidate.id === id);
    expect(voice('espeak-ng:en-us')).toMatchObject({
      name: 'English (America)',
      language: 'en-US',
      gender: 'male',
      sampleRate: 22050,
      wordTimings: true,
      phonemes: true,
    });
    expect(voice('espeak-ng:en-us+f3')).toMatchObject({ name: 'English (America), female', gender: 'female' });
    expect(voice('espeak-ng:en')).toMatchObject({ language: 'en-GB' });
    expect(voice('espeak-ng:en-gb-scotland')).toMatchObject({ language: 'en-GB-scotland' });
    expect(voice('espeak-ng:cmn')).toMatchObject({ language: 'zh-CN', engineLanguage: 'cmn' });
    expect(voice('espeak-ng:cmn-latn-pinyin')).toMatchObject({ language: 'zh-Latn-CN-pinyin', engineLanguage: 'cmn-Latn-pinyin' });
    expect(voice('espeak-ng:yue')).toMatchObject({ language: 'zh-HK', engineLanguage: 'yue' });
    expect(voice('espeak-ng:es-419')).toMatchObject({ language: 'es-419' });
    expect(voice('espeak-ng:fr')).toMatchObject({ language: 'fr-FR' });
    expect(voice('espeak-ng:chr')).toMatchObject({ language: 'chr-Qaaa-US-x-west' });
    expect(voice('espeak-ng:piqd')).toMatchObject({ language: 'tlh-Piqd' });
    expect(voice('flite:slt')).toMatchObject({ language: 'en-US', gender: 'female', sampleRate: 16000, wordTimings: false, phonemes: false });
    expect(voice('flite:awb')).toMatchObject({ language: 'en-GB-scotland', gender: 'male' });
    if (hasFestival) {
      expect(voice('festival:slt-hts')).toMatchObject({ language: 'en-US', gender: 'female', wordTimings: true });
    }
    for (const { language } of engines.listVoices()) {
      const [primary = '', ...rest] = language.split('-x-')[0]?.split('-') ?? [];
      expect(primary).toMatch(/^[a-z]{2,3}$/);
      for (const subtag of rest) expect(subtag).toMatch(/^([A-Z]{2}|\d{3}|[A-Z][a-z]{3}|[a-z\d]{3,8})$/);
    }
  });

  it('accepts any eSpeak variant and rejects unknown voices', async () => {
    const variants = engines.listEspeakVariants();
    expect(variants.map((variant) => variant.id)).toEqual(expect.arrayContaining(['f3', 'm1', 'whisper', 'klatt']));
    expect(engines.findVoice('espeak-ng:en-us+whisper')).toMatchObject({ id: 'espeak-ng:en-us+whisper', language: 'en-US' });
    expect(engines.findVoice('ESPEAK-NG:EN-US+Annie')).toMatchObject({ id: 'espeak-ng:en-us+annie', gender: 'female' });
    expect(engines.findVoice('espeak-ng:en-us+no-such-variant')).toBeUndefined();
    expect(engines.findVoice('espeak-ng:en-us+../../etc/passwd')).toBeUndefined();
    expect(engines.findVoice('espeak-ng:xx-nowhere')).toBeUndefined();
    expect(engines.findVoice('flite:nobody')).toBeUndefined();
    expect(engines.findVoice('nothing')).toBeUndefined();
    expectSpeech(await engines.synthesize('espeak-ng:de+m3', 'Guten Tag, wie geht es Ihnen?'), 22050, [0.8, 6]);
    const error = await expectFailure(engines.synthesize('espeak-ng:xx-nowhere', SENTENCE), 'UNKNOWN_VOICE');
    expect(error.field).toBe('voice');
    await expectFailure(engines.synthesize('flite:nobody', SENTENCE), 'UNKNOWN_VOICE');
  });

  it('synthesizes with eSpeak NG', async () => {
    const chunk = await engines.synthesize('espeak-ng:en-us', SENTENCE);
    expectSpeech(chunk, 22050, [1, 6]);
    expectWordsInOrder(SENTENCE, chunk, ['The', 'quick', 'brown', 'fox', 'jumps', 'over', 'the', 'lazy', 'dog']);
    expect(chunk.words).toHaveLength(9);
  });

  it('maps eSpeak word timings to the original text through escapes, accents and emoji', async () => {
    const chunk = await engines.synthesize('espeak-ng:en-us+f3', TRICKY);
    expectSpeech(chunk, 22050, [3, 15]);
    expectWordsInOrder(TRICKY, chunk, TRICKY_WORDS);
  });

  it('speaks markup as text', async () => {
    const text = '<speak><break time="5s"/></speak>';
    const chunk = await engines.synthesize('espeak-ng:en-us', text);
    expectSpeech(chunk, 22050, [1, 4.5]);
    expectWordsInOrder(text, chunk, ['speak', 'break', 'time', 'speak']);
    // `[[...]]` would otherwise be read as phonemes: spelled out, it takes much longer than the word "hello".
    const phonemes = await engines.synthesize('espeak-ng:en-us', '[[h@loU]]');
    expect(duration(phonemes)).toBeGreaterThan(0.8);
  });

  it('does not obey control characters (eSpeak embedded commands)', async () => {
    // U+0001 followed by `50S` would set the rate to 50 words a minute for the rest of the text.
    const plain = await engines.synthesize('espeak-ng:en-us', 'a  50S b c d e f g');
    const commanded = await engines.synthesize('espeak-ng:en-us', 'a \u000150S b c d e f g');
    expect(Math.abs(duration(commanded) - duration(plain))).toBeLessThan(0.1);
  });

  it('speaks other languages', async () => {
    expectSpeech(await engines.synthesize('espeak-ng:fr', 'Bonjour, comment allez-vous aujourd’hui ?'), 22050, [1, 6]);
    const chinese = '你好世界。今天天气很好。';
    const chunk = await engines.synthesize('espeak-ng:cmn', chinese);
    expectSpeech(chunk, 22050, [1, 10]);
    expectWordsInOrder(chinese, chunk, []);
  });

  it('keeps the event loop free while eSpeak works on a long text', async () => {
    // Run on this thread, the WebAssembly would hold the loop for the whole synthesis: a timer could not tick.
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 10);
    const started = performance.now();
    const chunk = await engines.synthesize('espeak-ng:en-us', `${LONG} ${LONG}`);
    const elapsed = performance.now() - started;
    clearInterval(timer);
    expect(duration(chunk)).toBeGreaterThan(120);
    expect(ticks).toBeGreaterThan((elapsed / 10) * 0.3);
  });

  it.each(['flite:slt', 'flite:rms', 'flite:awb', 'flite:kal16'])('synthesizes with %s', async (voice) => {
    const chunk = await engines.synthesize(voice, SENTENCE);
    expectSpeech(chunk, 16000, [1, 6]);
    expect(chunk.words).toBeUndefined();
  });

  it('speaks long texts with Flite, one process after the other (memory growth used to crash it)', async () => {
    expectSpeech(await engines.synthesize('flite:slt', LONG), 16000, [60, 400]);
    const text = LONG.slice(0, 1000);
    for (const voice of ['flite:kal16', 'flite:awb', 'flite:kal16']) {
      expectSpeech(await engines.synthesize(voice, text), 16000, [30, 200]);
    }
  });

  it.skipIf(!hasFestival)('synthesizes with Festival, with word timings', async () => {
    const chunk = await engines.synthesize('festival:slt-hts', SENTENCE);
    expectSpeech(chunk, 32000, [1, 6]);
    expectWordsInOrder(SENTENCE, chunk, ['The', 'quick', 'brown', 'fox', 'jumps', 'over', 'the', 'lazy', 'dog']);
    const tricky = await engines.synthesize('festival:slt-hts', TRICKY);
    expectWordsInOrder(TRICKY, tricky, TRICKY_WORDS);
    const scheme = 'He said ") (quit) "\\ (format t "x") and went on.';
    const spoken = await engines.synthesize('festival:slt-hts', scheme);
    expectWordsInOrder(scheme, spoken, ['He', 'said', 'quit', 'format', 'and', 'went', 'on']);
  });
});

describe('eSpeak NG isolation', () => {
  let engine: EspeakEngine;
  const seen = new Set<number>();
  const running = () => {
    for (const pid of engine.pids()) seen.add(pid);
    return engine.pids();
  };

  beforeAll(async () => {
    engine = await EspeakEngine.create({ poolSize: 1, jobTimeoutMs: 2000, hostModule: fixture('faulty-espeak-host.ts') });
  });

  afterAll(async () => {
    await engine?.close();
    await expectGone([...seen]);
    expect(descendantsOf(process.pid).filter(({ pid }) => seen.has(pid))).toEqual([]);
  });

  it.each(['abort', 'segfault', 'exit'])('fails only the call whose engine dies (%s), then works again', async (fault) => {
    const before = running();
    await expectFailure(engine.synthesize('espeak-ng:en-us', `FAULT:${fault}`), 'ENGINE_FAILED');
    await expectGone(before);
    expectSpeech(await engine.synthesize('espeak-ng:en-us', SENTENCE), 22050, [1, 6]);
    running();
  });

  it('fails the call when the engine answers garbage, and kills it', async () => {
    const before = running();
    await expectFailure(engine.synthesize('espeak-ng:en-us', 'FAULT:garbage'), 'ENGINE_FAILED');
    await expectGone(before);
    expectSpeech(await engine.synthesize('espeak-ng:en-us', SENTENCE), 22050, [1, 6]);
  });

  it('times out a hung engine and kills it', async () => {
    const before = running();
    const started = Date.now();
    await expectFailure(engine.synthesize('espeak-ng:en-us', 'FAULT:hang'), 'JOB_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(4500);
    await expectGone(before);
    expectSpeech(await engine.synthesize('espeak-ng:en-us', SENTENCE), 22050, [1, 6]);
  });

  it('stops the running job when its signal aborts', async () => {
    await engine.synthesize('espeak-ng:en-us', 'Warm.');
    const before = running();
    const controller = new AbortController();
    const job = engine.synthesize('espeak-ng:en-us', 'FAULT:hang', { signal: controller.signal });
    // The host names itself once the job has reached it (see engine-faults.ts).
    await expect.poll(() => processesMatching('voxreel-fault: hang', descendantsOf(process.pid)).map(({ pid }) => pid)).toEqual(before);
    controller.abort();
    await expectFailure(job, 'CLIENT_CLOSED');
    await expectGone(before);
    await expectFailure(engine.synthesize('espeak-ng:en-us', SENTENCE, { signal: AbortSignal.abort() }), 'CLIENT_CLOSED');
  });

  it('drops an aborted job from the queue without touching the running one', async () => {
    await engine.synthesize('espeak-ng:en-us', 'Warm.');
    const before = running();
    const first = engine.synthesize('espeak-ng:en-us', LONG);
    const controller = new AbortController();
    const second = engine.synthesize('espeak-ng:en-us', SENTENCE, { signal: controller.signal });
    controller.abort();
    await expectFailure(second, 'CLIENT_CLOSED');
    expect(duration(await first)).toBeGreaterThan(60);
    expect(engine.pids()).toEqual(before);
  });
});

describe('Flite isolation', () => {
  let engine: FliteEngine;
  const seen = new Set<number>();

  beforeAll(async () => {
    engine = await FliteEngine.create({
      poolSize: 1,
      jobTimeoutMs: 2000,
      jobsPerProcess: 2,
      hostModule: fixture('faulty-flite-host.ts'),
    });
  });

  afterAll(async () => {
    for (const pid of engine?.pids() ?? []) seen.add(pid);
    await engine?.close();
    await expectGone([...seen]);
  });

  it('fails only the call whose engine crashes, then works again', async () => {
    for (const pid of engine.pids()) seen.add(pid);
    await expectFailure(engine.synthesize('flite:slt', 'FAULT:segfault'), 'ENGINE_FAILED');
    expectSpeech(await engine.synthesize('flite:slt', SENTENCE), 16000, [1, 6]);
  });

  it('times out a hung engine', async () => {
    for (const pid of engine.pids()) seen.add(pid);
    await expectFailure(engine.synthesize('flite:kal16', 'FAULT:hang'), 'JOB_TIMEOUT');
    expectSpeech(await engine.synthesize('flite:kal16', SENTENCE), 16000, [1, 6]);
  });

  it('replaces its process after jobsPerProcess jobs', async () => {
    const recycling = await FliteEngine.create({ poolSize: 1, jobTimeoutMs: 10_000, jobsPerProcess: 2 });
    try {
      await recycling.synthesize('flite:kal16', 'One.');
      const first = recycling.pids();
      expect(first).toHaveLength(1);
      await recycling.synthesize('flite:kal16', 'Two.');
      expect(recycling.pids()).not.toEqual(expect.arrayContaining(first));
      await expectGone(first);
      expectSpeech(await recycling.synthesize('flite:kal16', SENTENCE), 16000, [1, 6]);
    } finally {
      await recycling.close();
    }
  });
});

describe.skipIf(!hasFestival)('Festival isolation', () => {
  let engine: FestivalEngine;
  const seen = new Set<number>();

  beforeAll(async () => {
    engine = await FestivalEngine.create({ jobTimeoutMs: 1500 });
  });

  afterAll(async () => {
    await engine?.close();
    await expectGone([...seen]);
  });

  it('starts on first use and keeps its process', async () => {
    expect(engine.pids()).toEqual([]);
    await engine.synthesize('festival:slt-hts', 'Hello.');
    const pids = engine.pids();
    await engine.synthesize('festival:slt-hts', 'Hello again.');
    expect(engine.pids()).toEqual(pids);
    pids.forEach((pid) => seen.add(pid));
  });

  it('times out a long job, kills Festival and recovers', async () => {
    const before = engine.pids();
    await expectFailure(engine.synthesize('festival:slt-hts', LONG), 'JOB_TIMEOUT');
    await expectGone(before);
    expectSpeech(await engine.synthesize('festival:slt-hts', SENTENCE), 32000, [1, 6]);
    engine.pids().forEach((pid) => seen.add(pid));
  });

  it('fails only the call during which Festival crashes', async () => {
    const [pid] = engine.pids();
    expect(pid).toBeDefined();
    const job = engine.synthesize('festival:slt-hts', LONG);
    setTimeout(() => process.kill(pid ?? 0, 'SIGSEGV'), 300);
    await expectFailure(job, 'ENGINE_FAILED');
    expectSpeech(await engine.synthesize('festival:slt-hts', SENTENCE), 32000, [1, 6]);
    engine.pids().forEach((started) => seen.add(started));
  });

  it('stops Festival when the signal aborts', async () => {
    const before = engine.pids();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    await expectFailure(engine.synthesize('festival:slt-hts', LONG, { signal: controller.signal }), 'CLIENT_CLOSED');
    await expectGone(before);
  });
});

describe('parent death', () => {
  it('takes the engine processes down with the parent', async () => {
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const parent = spawn(process.execPath, ['--import', tsx, fixture('engine-parent.ts')], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      let output = '';
      parent.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('\n')) resolve(output.split('\n')[0] ?? '');
      });
      parent.on('close', () => reject(new Error(`engine-parent exited: ${output}`)));
    });
    const pids = JSON.parse(line) as number[];
    expect(pids.length).toBeGreaterThanOrEqual(hasFestival ? 3 : 2);
    expect(pids.every(isAlive)).toBe(true);
    parent.kill('SIGKILL');
    await expectGone(pids);
  });
});
