import { ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EspeakEngine } from '../../src/engines/espeak/engine.js';
import { AppError, cancelReason } from '../../src/errors.js';
import { audioDuration } from '../../src/speech/audio-duration.js';
import { encodePcm, encodeSpeech, WarmEncoders, type EncodeOptions } from '../../src/speech/audio-encoding.js';
import type { CodecSource } from '../../src/speech/encoders/codec.js';
import { encodePcmInProcess, IN_PROCESS_MAX_SECONDS, prepareInProcessEncoding } from '../../src/speech/encoders/in-process.js';
import { crc16, withInfoFrame } from '../../src/speech/encoders/mp3-info-frame.js';
import { nativeLame } from '../../src/speech/encoders/native-lame.js';
import { wasmCodec } from '../../src/speech/encoders/wasm-codecs.js';
import type { Speech } from '../../src/speech/speech.js';
import { decodeErrors, ffmpeg, probe, rawStreams, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const dir = useTempDir('voxreel-in-process-');
const TEXT =
  'Welcome back! Today we look at three simple ways to save money on groceries: plan your meals, buy in season, and never shop hungry. ' +
  'Each of them takes a minute a week, and together they cut the bill by a fifth.';

/**
 * Every child process this test process starts goes through ChildProcess#spawn (spawn, exec, execFile, fork,
 * fluent-ffmpeg's), a method Node's types leave out.
 */
const spawns = vi.spyOn(ChildProcess.prototype as unknown as { spawn: (options: unknown) => void }, 'spawn');
afterEach(() => spawns.mockClear());

let engine: EspeakEngine;
let speech: Speech;

beforeAll(async () => {
  engine = await EspeakEngine.create({ poolSize: 1 });
  const chunk = await engine.synthesize('espeak-ng:en-us', TEXT);
  speech = speechOf(chunk.samples, chunk.sampleRate);
});
afterAll(() => engine.close());

function speechOf(samples: Int16Array, sampleRate: number): Speech {
  return { samples, sampleRate, duration: samples.length / sampleRate, sentences: [], words: [] };
}

/** encodeSpeech into a file of this folder, and how many processes it started meanwhile. */
async function encode(name: string, from: Speech, options: Omit<EncodeOptions, 'output'>): Promise<{ file: string; processes: number }> {
  const file = path.join(dir, name);
  const before = spawns.mock.calls.length;
  await encodeSpeech(ffmpeg, from, { ...options, output: file });
  return { file, processes: spawns.mock.calls.length - before };
}

/** The file's audio, decoded by ffmpeg, as mono 16-bit samples at its own rate. */
async function decode(file: string): Promise<Int16Array> {
  const { stdout } = await runFfmpeg(['-v', 'error', '-i', file, '-f', 's16le', '-ac', '1', 'pipe:1']);
  return new Int16Array(stdout.buffer.slice(stdout.byteOffset, stdout.byteOffset + stdout.length));
}

/** Signal to noise of a decoded file against its source, in dB. */
function snr(source: Int16Array, decoded: Int16Array): number {
  let signal = 0;
  let noise = 0;
  for (let i = 0; i < source.length; i += 1) {
    signal += (source[i] ?? 0) ** 2;
    noise += ((source[i] ?? 0) - (decoded[i] ?? 0)) ** 2;
  }
  return 10 * Math.log10(signal / noise);
}

/** The LAME tag's encoder delay and padding (Mp3 info tag rev 1), read where the Info tag says it is. */
async function lameTag(file: string): Promise<{ frames: number; delay: number; padding: number; tagCrc: boolean }> {
  const head = (await readFile(file)).subarray(0, 400);
  const xing = head.indexOf('Info', 0, 'latin1');
  const tag = xing + 120;
  const delayPadding = head.readUIntBE(tag + 21, 3);
  const frameForCrc = Buffer.from(head.subarray(0, 190));
  frameForCrc.writeUInt16BE(0, tag + 34);
  return { frames: head.readUInt32BE(xing + 8), delay: delayPadding >> 12, padding: delayPadding & 0xfff, tagCrc: crc16(frameForCrc) === head.readUInt16BE(tag + 34) };
}

/** A sweep from 200 Hz to 3 kHz at half scale over noise at -30 dB: something for a codec to work on at any rate. */
function sweep(sampleRate: number, seconds: number): Int16Array {
  let seed = 1;
  return Int16Array.from({ length: Math.round(sampleRate * seconds) }, (_, i) => {
    const t = i / sampleRate;
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return Math.round(16_000 * Math.sin(2 * Math.PI * (200 * t + (2800 / (2 * seconds)) * t * t)) + 1000 * (seed / 2 ** 30 - 1));
  });
}

describe('encodeSpeech without a process', () => {
  it('writes eSpeak NG speech as WAV, mp3 and Ogg Vorbis that ffmpeg decodes whole, and starts no process for it', async () => {
    expect(speech.duration).toBeGreaterThan(8);
    for (const encoding of ['wav', 'mp3', 'ogg'] as const) {
      const { file, processes } = await encode(`speech.${encoding}`, speech, { encoding, speed: 1 });
      expect(processes, encoding).toBe(0);
      expect(await decodeErrors(file), encoding).toBe('');
      const [stream] = await rawStreams(file);
      expect(stream, encoding).toMatchObject({
        codec_name: { wav: 'pcm_s16le', mp3: 'mp3', ogg: 'vorbis' }[encoding],
        sample_rate: String(speech.sampleRate),
        channels: 1,
      });
      if (encoding === 'mp3') expect(stream?.bit_rate).toBe('64000');
      // Gapless: LAME's delay and padding are trimmed by the decoder, so not one sample more or less.
      const decoded = await decode(file);
      expect(decoded.length, encoding).toBe(speech.samples.length);
      if (encoding === 'wav') expect(Buffer.from(decoded.buffer).equals(Buffer.from(speech.samples.buffer, speech.samples.byteOffset, speech.samples.byteLength))).toBe(true);
      else expect(snr(speech.samples, decoded), encoding).toBeGreaterThan(15);
      expect(Math.abs((await audioDuration(file, encoding)) - (await probe(file)).duration), encoding).toBeLessThan(0.001);
    }
  });

  it("matches ffmpeg's own encodes: LAME at 64 kb/s with the same frames, delay and padding, Vorbis q4 at the same quality", async () => {
    for (const encoding of ['mp3', 'ogg'] as const) {
      const ours = (await encode(`ours.${encoding}`, speech, { encoding, speed: 1 })).file;
      const theirs = path.join(dir, `ffmpeg.${encoding}`);
      const pcm = Buffer.from(speech.samples.buffer, speech.samples.byteOffset, speech.samples.byteLength);
      await encodePcm(ffmpeg, Readable.from([pcm]), speech.sampleRate, { encoding, speed: 1, output: theirs });
      const [ourSize, theirSize] = [(await readFile(ours)).length, (await readFile(theirs)).length];
      if (encoding === 'mp3') {
        expect(await lameTag(ours)).toEqual({ ...(await lameTag(theirs)), tagCrc: true });
        expect(ourSize).toBe(theirSize);
      } else {
        expect(Math.abs(ourSize / theirSize - 1)).toBeLessThan(0.05);
      }
      expect(Math.abs(snr(speech.samples, await decode(ours)) - snr(speech.samples, await decode(theirs))), encoding).toBeLessThan(0.5);
      expect(await audioDuration(ours, encoding)).toBeCloseTo(await audioDuration(theirs, encoding), 6);
    }
  });

  it("both mp3 codecs, the system's LAME and LAME in WebAssembly, load and give ffmpeg's frames", async () => {
    expect(await prepareInProcessEncoding()).toEqual({ mp3: 'native', ogg: 'wasm' });
    const theirs = path.join(dir, 'reference.mp3');
    await encodePcm(ffmpeg, Readable.from([Buffer.from(speech.samples.buffer, speech.samples.byteOffset, speech.samples.byteLength)]), speech.sampleRate, { encoding: 'mp3', speed: 1, output: theirs });
    const reference = await readFile(theirs);
    for (const [name, source] of [['native', await nativeLame()], ['wasm', await wasmCodec('mp3')]] as Array<[string, CodecSource | undefined]>) {
      if (!source?.lame) throw new Error(`no ${name} LAME`);
      const codec = await source.acquire();
      codec.start(speech.sampleRate);
      const frames = Buffer.concat([codec.encode(speech.samples), codec.finish()]);
      codec.release(true);
      const file = path.join(dir, `${name}.mp3`);
      await writeFile(file, withInfoFrame(frames, { samples: speech.samples.length, encoderDelay: source.lame.delay, encoder: source.lame.encoder }));
      expect(await decodeErrors(file), name).toBe('');
      expect(await lameTag(file), name).toEqual({ ...(await lameTag(theirs)), tagCrc: true });
      expect(snr(speech.samples, await decode(file)), name).toBeGreaterThan(snr(speech.samples, await decode(theirs)) - 0.5);
      // The same library with the same settings on the same samples: ffmpeg's frames, byte for byte.
      if (name === 'native') expect(frames.equals(reference.subarray(reference.length - frames.length)), name).toBe(true);
    }
  });

  it.each([8000, 11_025, 16_000, 24_000, 32_000, 44_100, 48_000])('mp3 and ogg at %i Hz (MPEG-1, 2 and 2.5 frames)', async (rate) => {
    const tone = speechOf(sweep(rate, 3.3), rate);
    for (const encoding of ['mp3', 'ogg'] as const) {
      const { file, processes } = await encode(`sweep-${rate}.${encoding}`, tone, { encoding, speed: 1, sampleRate: rate });
      expect(processes).toBe(0);
      expect(await decodeErrors(file)).toBe('');
      expect((await decode(file)).length).toBe(tone.samples.length);
      expect(Math.abs((await audioDuration(file, encoding)) - (await probe(file)).duration)).toBeLessThan(0.001);
    }
  });

  it('an ogg of one audio page: within a Vorbis block of its length, as ffmpeg writes it', async () => {
    // The page's granule ends the stream early, or starts it late: decoders differ (Vorbis I §A.2), ffmpeg's included.
    const blip = speechOf(speech.samples.subarray(0, Math.round(0.3 * speech.sampleRate)), speech.sampleRate);
    const { file, processes } = await encode('blip.ogg', blip, { encoding: 'ogg', speed: 1 });
    expect(processes).toBe(0);
    const theirs = path.join(dir, 'blip-ffmpeg.ogg');
    await encodePcm(ffmpeg, Readable.from([Buffer.from(blip.samples.buffer, blip.samples.byteOffset, blip.samples.byteLength)]), blip.sampleRate, { encoding: 'ogg', speed: 1, output: theirs });
    for (const written of [file, theirs]) expect(Math.abs((await decode(written)).length - blip.samples.length)).toBeLessThanOrEqual(256);
    expect(await audioDuration(file, 'ogg')).toBeCloseTo(blip.duration, 6);
  });

  it('streams raw PCM at the voice\'s own rate as it is, starting no ffmpeg (Wyoming, pcm formats); another rate still goes through one', async () => {
    const encoders = new WarmEncoders(ffmpeg);
    try {
      const pcm = Buffer.from(speech.samples.buffer, speech.samples.byteOffset, speech.samples.byteLength);
      const received: Buffer[] = [];
      const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (received.push(chunk), done()) });
      const before = spawns.mock.calls.length;
      await encoders.encode(Readable.from([pcm]), speech.sampleRate, { encoding: 'pcm', speed: 1, output: sink });
      expect(spawns.mock.calls.length - before).toBe(0);
      expect(Buffer.concat(received).equals(pcm)).toBe(true);
      const resampled: Buffer[] = [];
      const other = new Writable({ write: (chunk: Buffer, _encoding, done) => (resampled.push(chunk), done()) });
      await encoders.encode(Readable.from([pcm]), speech.sampleRate, { encoding: 'pcm', speed: 1, sampleRate: 16_000, output: other });
      expect(spawns.mock.calls.length - before).toBeGreaterThan(0);
      expect(Math.abs(Buffer.concat(resampled).length / 2 - (speech.samples.length * 16_000) / speech.sampleRate)).toBeLessThan(200);
    } finally {
      encoders.close();
    }
  });

  it('gives a stream the bytes and ends it', async () => {
    const output = new PassThrough();
    const chunks: Buffer[] = [];
    output.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise((resolve) => output.once('end', resolve));
    await encodeSpeech(ffmpeg, speech, { encoding: 'ogg', speed: 1, output });
    await ended;
    expect(Buffer.concat(chunks).toString('latin1', 0, 4)).toBe('OggS');
    expect(spawns).not.toHaveBeenCalled();
  });

  it('stops with the signal’s reason', async () => {
    for (const encoding of ['wav', 'mp3'] as const) {
      const controller = new AbortController();
      controller.abort(cancelReason('JOB_CANCELLED'));
      const stopped = encodeSpeech(ffmpeg, speech, { encoding, speed: 1, output: path.join(dir, `stopped.${encoding}`), signal: controller.signal });
      await expect(stopped).rejects.toSatisfy((error) => error instanceof AppError && error.code === 'JOB_CANCELLED');
    }
    // Stopped midway: the encoder checks between slices.
    const controller = new AbortController();
    const stopped = encodeSpeech(ffmpeg, speech, { encoding: 'mp3', speed: 1, output: path.join(dir, 'midway.mp3'), signal: controller.signal });
    setImmediate(() => controller.abort(cancelReason('CLIENT_CLOSED')));
    await expect(stopped).rejects.toSatisfy((error) => error instanceof AppError && error.code === 'CLIENT_CLOSED');
    expect(spawns).not.toHaveBeenCalled();
  });
});

describe('a long job\'s mp3, encoded in process as its speech arrives', () => {
  it('writes, from PCM in pieces of any size, the file encodeSpeech makes whole (and so ffmpeg\'s frames and LAME tag), starting no process', async () => {
    const whole = (await encode('whole.mp3', speech, { encoding: 'mp3', speed: 1 })).file;
    const bytes = Buffer.from(speech.samples.buffer, speech.samples.byteOffset, speech.samples.byteLength);
    // Pieces of odd sizes: a sample cut between two of them.
    const pieces = [0, 1001, 1002, 30_001, 30_002, 99_999, bytes.length].flatMap((at, index, cuts) => (index === 0 ? [] : [bytes.subarray(cuts[index - 1], at)]));
    const streamed = path.join(dir, 'streamed.mp3');
    const before = spawns.mock.calls.length;
    expect(await encodePcmInProcess(Readable.from(pieces), speech.sampleRate, { encoding: 'mp3', speed: 1, output: streamed })).toBe(true);
    expect(spawns.mock.calls.length - before).toBe(0);
    expect((await readFile(streamed)).equals(await readFile(whole))).toBe(true);
    expect(await lameTag(streamed)).toMatchObject({ tagCrc: true });
    expect(await decodeErrors(streamed)).toBe('');
  });

  it('leaves what it cannot encode to ffmpeg, reading nothing: another format, speed or rate', async () => {
    let read = false;
    const untouched = () =>
      Readable.from(
        (async function* () {
          read = true;
          yield Buffer.alloc(2);
        })(),
      );
    const output = path.join(dir, 'never.mp3');
    expect(await encodePcmInProcess(untouched(), 22_050, { encoding: 'ogg', speed: 1, output })).toBe(false);
    expect(await encodePcmInProcess(untouched(), 22_050, { encoding: 'mp3', speed: 1.2, output })).toBe(false);
    expect(await encodePcmInProcess(untouched(), 44_000, { encoding: 'mp3', speed: 1, output })).toBe(false);
    expect(read).toBe(false);
  });
});

describe('encodeSpeech through ffmpeg', () => {
  // The counter's own check: each of these needs ffmpeg, and must be seen to start it.
  it.each([
    ['a speed', { encoding: 'wav', speed: 0.75 }],
    ['a loudness target', { encoding: 'mp3', speed: 1, loudness: -16 }],
    ['another rate', { encoding: 'ogg', speed: 1, sampleRate: 48_000 }],
    ['another encoding', { encoding: 'flac', speed: 1 }],
  ] as const)('with %s', async (_, options) => {
    const { file, processes } = await encode(`through-ffmpeg.${options.encoding}`, speech, options);
    expect(processes).toBeGreaterThan(0);
    expect(await decodeErrors(file)).toBe('');
  });

  it(`for mp3 and ogg longer than ${IN_PROCESS_MAX_SECONDS} s (WAV is still written here)`, async () => {
    const copies = Math.ceil((IN_PROCESS_MAX_SECONDS + 1) / speech.duration);
    const samples = new Int16Array(speech.samples.length * copies);
    for (let copy = 0; copy < copies; copy += 1) samples.set(speech.samples, copy * speech.samples.length);
    const long = speechOf(samples, speech.sampleRate);
    for (const encoding of ['wav', 'mp3', 'ogg'] as const) {
      const { file, processes } = await encode(`long.${encoding}`, long, { encoding, speed: 1 });
      if (encoding === 'wav') expect(processes).toBe(0);
      else expect(processes, encoding).toBeGreaterThan(0);
      expect(Math.abs((await audioDuration(file, encoding)) - (await probe(file)).duration)).toBeLessThan(0.001);
    }
  });
});
