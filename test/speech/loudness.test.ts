import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../src/api/errors.js';
import { encodeSpeech, type AudioEncoding, type PcmEncodeOptions } from '../../src/speech/audio-encoding.js';
import { integratedLoudness, kWeighting, limitPeaks, normalizeLoudness, truePeak, TruePeakMeter, TRUE_PEAK_CEILING } from '../../src/speech/loudness.js';
import type { Speech } from '../../src/speech/speech.js';
import { postTts, useTestApp } from '../helpers/helpers.js';
import { ebur128, probe, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const t = useTestApp();
const dir = useTempDir('voxreel-loudness-');

const TEXT = 'Welcome back! Today we look at three simple ways to save money on groceries: plan your meals, buy in season, and never shop hungry.';
/** Two voices of different levels: eSpeak NG near -21 LUFS with high peaks, Flite near -16 LUFS. */
const VOICES = ['espeak-ng:en-us', 'flite:slt'] as const;
/** The true-peak ceiling as ffmpeg prints it, to one decimal. */
const PEAK_LIMIT = TRUE_PEAK_CEILING + 0.1;

async function speak(voice: string, text = TEXT): Promise<Speech> {
  return t.app.synthesizer.speak({ text, voice: t.app.synthesizer.resolveVoice({ text, voice }) }, t.app.synthesizer.budget('video'));
}

/** The file's audio as mono 16-bit samples at its own rate. */
async function decode(file: string): Promise<Int16Array> {
  const { stdout } = await runFfmpeg(['-v', 'error', '-i', file, '-f', 's16le', '-ac', '1', 'pipe:1']);
  return new Int16Array(stdout.buffer.slice(stdout.byteOffset, stdout.byteOffset + stdout.length));
}

async function writeRaw(name: string, samples: Int16Array): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
  return file;
}

/** A sine of `amplitude` (full scale 1), faded in and out over 10 ms so that its ends add no overshoot of their own. */
function sine(frequency: number, amplitude: number, sampleRate: number, seconds: number, phase = 0): Int16Array {
  const length = Math.round(seconds * sampleRate);
  const fade = Math.round(sampleRate / 100);
  return Int16Array.from({ length }, (_, index) => {
    const edge = Math.min(1, index / fade, (length - 1 - index) / fade);
    const envelope = Math.sin((Math.PI / 2) * edge) ** 2;
    return Math.round(32768 * amplitude * envelope * Math.sin(2 * Math.PI * (frequency / sampleRate) * index + phase));
  });
}

describe('integratedLoudness and truePeak', () => {
  it('uses the K-weighting of BS.1770-4 at 48 kHz', () => {
    const [shelf, pass] = kWeighting(48_000);
    const published = [1.53512485958697, -2.69169618940638, 1.19839281085285, -1.69065929318241, 0.73248077421585];
    expect([shelf.b0, shelf.b1, shelf.b2, shelf.a1, shelf.a2].map((value, index) => value - (published[index] ?? 0)).every((d) => Math.abs(d) < 1e-9)).toBe(true);
    expect(pass.a1).toBeCloseTo(-1.99004745483398, 9);
    expect(pass.a2).toBeCloseTo(0.99007225036621, 9);
  });

  it('reads a 997 Hz sine at -20 dBFS as -23.01 LUFS at every engine rate', () => {
    for (const rate of [16_000, 22_050, 24_000, 32_000, 48_000]) {
      expect(integratedLoudness(sine(997, 0.1, rate, 3), rate), String(rate)).toBeCloseTo(-23.01, 1);
    }
  });

  it('agrees with ffmpeg ebur128 on real speech within 0.5 LU', async () => {
    for (const voice of VOICES) {
      const speech = await speak(voice);
      const file = await writeRaw(`${voice.replace(':', '-')}.raw`, speech.samples);
      const ours = integratedLoudness(speech.samples, speech.sampleRate);
      const theirs = await ebur128(['-f', 's16le', '-ar', String(speech.sampleRate), '-ac', '1', '-i', file]);
      expect(Math.abs(ours - theirs.integrated), `${voice}: ${ours} vs ${theirs.integrated}`).toBeLessThan(0.5);
      expect(Math.abs(truePeak(speech.samples) - theirs.truePeak), voice).toBeLessThan(0.5);
    }
  });

  it('gates out silence: ten seconds of it, which would take some 3 dB off a plain mean, change little', async () => {
    const speech = await speak('flite:slt');
    const padded = new Int16Array(speech.samples.length + 10 * speech.sampleRate);
    padded.set(speech.samples, 5 * speech.sampleRate);
    const own = integratedLoudness(speech.samples, speech.sampleRate);
    expect(Math.abs(integratedLoudness(padded, speech.sampleRate) - own)).toBeLessThan(0.3);
  });

  it('skips no point that could be the peak: the same true peak as every point of every sample interpolated', async () => {
    // The interpolator defined again here (BS.1770-4 Annex 2's scheme: 4x, a Kaiser-windowed sinc of 12 taps a side,
    // beta 8, unit gain at DC), run over every point with no shortcut.
    const i0 = (x: number) => {
      let [sum, term] = [1, 1];
      for (let k = 1; k < 30; k += 1) sum += term *= (x / (2 * k)) ** 2;
      return sum;
    };
    const phases = [1, 2, 3].map((quarter) => {
      const taps = Array.from({ length: 24 }, (_, tap) => {
        const t = quarter / 4 - (tap - 11);
        return (Math.sin(Math.PI * t) / (Math.PI * t)) * (i0(8 * Math.sqrt(1 - (t / 12) ** 2)) / i0(8));
      });
      const sum = taps.reduce((total, tap) => total + tap, 0);
      return taps.map((tap) => tap / sum);
    });
    const everyPoint = (samples: Int16Array, channels: number) => {
      let highest = 0;
      for (let channel = 0; channel < channels; channel += 1) {
        const own = Array.from({ length: samples.length / channels }, (_, frame) => samples[frame * channels + channel] ?? 0);
        const at = (index: number) => (index >= 0 && index < own.length ? (own[index] as number) : 0);
        for (let index = -1; index < own.length; index += 1) {
          highest = Math.max(highest, Math.abs(at(index)));
          for (const taps of phases) highest = Math.max(highest, Math.abs(taps.reduce((sum, tap, k) => sum + tap * at(index + k - 11), 0)));
        }
      }
      return 20 * Math.log10(highest / 32768);
    };
    const speech = await speak('espeak-ng:en-us');
    const loud = Int16Array.from(speech.samples.subarray(0, 4 * speech.sampleRate), (sample) => Math.max(-32768, Math.min(32767, sample * 3)));
    const noise = Int16Array.from({ length: 20_000 }, (_, index) => Math.round(12_000 * Math.sin(index * 1.7) * Math.sin(index * 0.013) + 6000 * Math.sin(index * 2.9)));
    for (const [label, samples, channels] of [
      ['speech', speech.samples.subarray(0, 3 * speech.sampleRate), 1],
      ['speech clipped 10 dB up', loud, 1],
      ['speech limited to -6 dBTP', limitPeaks(loud, speech.sampleRate, -6), 1],
      ['tones near a quarter of the rate', noise, 1],
      ['the same as stereo', noise, 2],
    ] as const) {
      expect(truePeak(samples, channels), label).toBeCloseTo(everyPoint(samples, channels), 9);
    }
  });

  it('finds the peak between samples (a quarter-rate sine sampled 3 dB under its crest)', () => {
    const samples = sine(24_000 / 4, 0.5, 24_000, 1, Math.PI / 4);
    const samplePeak = 20 * Math.log10(Math.max(...samples.map(Math.abs)) / 32768);
    expect(samplePeak).toBeCloseTo(-9.03, 1);
    expect(truePeak(samples)).toBeCloseTo(-6.02, 1);
  });

  it('meters audio that comes in pieces as it meters the whole: pieces of any length, cut inside frames, mono and stereo', async () => {
    const speech = await speak('espeak-ng:en-us');
    const stereo = Int16Array.from({ length: 2 * speech.samples.length }, (_, at) => (speech.samples[at >> 1] ?? 0) >> (at % 2));
    for (const [samples, channels] of [[speech.samples, 1], [stereo, 2]] as const) {
      const bytes = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
      const meter = new TruePeakMeter(channels);
      // Odd lengths: pieces end inside a sample and inside a frame, as a pipe's reads do.
      for (let at = 0, piece = 1; at < bytes.length; at += piece, piece = (piece * 7 + 3) % 70_001) meter.push(bytes.subarray(at, at + piece));
      expect(meter.finish(), `${channels} channels`).toBe(truePeak(samples, channels));
    }
    expect(new TruePeakMeter(2).finish()).toBe(-Infinity);
  });

  it('has no loudness and no peak for silence, however short', () => {
    for (const samples of [new Int16Array(0), new Int16Array(10), new Int16Array(22_050 * 2)]) {
      expect(integratedLoudness(samples, 22_050)).toBe(-Infinity);
      expect(truePeak(samples)).toBe(-Infinity);
    }
  });

  it('limits true peaks to the ceiling and leaves quieter audio as it is', () => {
    const loud = sine(5000, 0.9, 22_050, 1, 0.3);
    const limited = limitPeaks(loud, 22_050, -6);
    expect(truePeak(limited)).toBeLessThanOrEqual(-5.95);
    const quiet = sine(440, 0.1, 22_050, 1);
    expect(limitPeaks(quiet, 22_050, -6)).toBe(quiet);
  });

  it('measures stereo as BS.1770 does (the channels\' powers summed) and limits both channels with one gain', () => {
    const left = sine(997, 0.1, 48_000, 3);
    const right = sine(5000, 0.9, 48_000, 3, 0.3);
    const interleave = (a: Int16Array, b: Int16Array) => Int16Array.from({ length: 2 * a.length }, (_, at) => ((at % 2 === 0 ? a : b)[at >> 1] ?? 0));
    expect(integratedLoudness(interleave(left, left), 48_000, 2)).toBeCloseTo(-20.0, 1);
    expect(truePeak(interleave(left, right), 2)).toBeCloseTo(truePeak(right), 5);
    const { samples, gain } = normalizeLoudness(interleave(left, right), 48_000, integratedLoudness(interleave(left, right), 48_000, 2) + 3, -3, 2);
    const [leftOut, rightOut] = [0, 1].map((channel) => samples.filter((_, at) => at % 2 === channel));
    expect(truePeak(rightOut!) + gain).toBeLessThanOrEqual(-2.9);
    // The quiet left channel is turned down exactly as much as the loud right one where the limiter holds it.
    const kept = (out: Int16Array, original: Int16Array) => {
      const window = (samples: Int16Array) => samples.subarray(72_000, 72_480).reduce((sum, value) => sum + Math.abs(value), 0);
      return window(out) / window(original);
    };
    expect(kept(rightOut!, right)).toBeLessThan(0.9);
    expect(kept(leftOut!, left)).toBeCloseTo(kept(rightOut!, right), 2);
  });
});

describe('encodeSpeech with a loudness target', () => {
  it('brings voices of different levels to -14 and -23 LUFS, true peak under -1 dBTP', async () => {
    const levels: number[] = [];
    for (const voice of VOICES) {
      const speech = await speak(voice);
      levels.push(integratedLoudness(speech.samples, speech.sampleRate));
      for (const loudness of [-14, -23]) {
        for (const encoding of ['wav', 'mp3', 'ogg'] satisfies AudioEncoding[]) {
          const output = path.join(dir, `${voice.replace(':', '-')}${loudness}.${encoding}`);
          await encodeSpeech(t.app.ffmpeg, speech, { encoding, speed: 1, loudness, output });
          const measured = await ebur128(['-i', output]);
          const label = `${voice} ${encoding} at ${loudness}: ${JSON.stringify(measured)}`;
          expect(Math.abs(measured.integrated - loudness), label).toBeLessThanOrEqual(1);
          expect(measured.truePeak, label).toBeLessThanOrEqual(PEAK_LIMIT);
        }
      }
    }
    // The voices really start apart: the targets do the levelling.
    expect(Math.abs((levels[0] ?? 0) - (levels[1] ?? 0))).toBeGreaterThan(2);
  });

  it("makes the video's soundtrack: 48 kHz AAC at -14 LUFS", async () => {
    const speech = await speak('espeak-ng:en-us');
    const output = path.join(dir, 'soundtrack.m4a');
    await encodeSpeech(t.app.ffmpeg, speech, { encoding: 'aac', speed: 1, sampleRate: 48_000, loudness: -14, output });
    const info = await probe(output);
    expect(info.streams[0]).toMatchObject({ codecName: 'aac', sampleRate: 48_000, channels: 1 });
    const measured = await ebur128(['-i', output]);
    expect(Math.abs(measured.integrated + 14), JSON.stringify(measured)).toBeLessThanOrEqual(1);
    expect(measured.truePeak).toBeLessThanOrEqual(PEAK_LIMIT);
  });

  it('combines with speed and sampleRate', async () => {
    const speech = await speak('flite:slt');
    const output = path.join(dir, 'slow.wav');
    await encodeSpeech(t.app.ffmpeg, speech, { encoding: 'wav', speed: 0.75, sampleRate: 44_100, loudness: -16, output });
    const info = await probe(output);
    expect(info.streams[0]?.sampleRate).toBe(44_100);
    expect(info.duration / speech.duration).toBeCloseTo(1 / 0.75, 1);
    const measured = await ebur128(['-i', output]);
    expect(Math.abs(measured.integrated + 16), JSON.stringify(measured)).toBeLessThanOrEqual(1);
    expect(measured.truePeak).toBeLessThanOrEqual(PEAK_LIMIT);
  });

  it('leaves silence silent instead of amplifying it without end', async () => {
    const silence: Speech = { samples: new Int16Array(22_050), sampleRate: 22_050, duration: 1, sentences: [], words: [] };
    const output = path.join(dir, 'silence.wav');
    await encodeSpeech(t.app.ffmpeg, silence, { encoding: 'wav', speed: 1, loudness: -14, output });
    const decoded = await decode(output);
    expect(decoded.length).toBe(silence.samples.length);
    expect(decoded.every((sample) => sample === 0)).toBe(true);
  });

  it('without a target writes the samples untouched', async () => {
    const speech = await speak('espeak-ng:en-us', 'Hello there, how are you?');
    const output = path.join(dir, 'untouched.wav');
    await encodeSpeech(t.app.ffmpeg, speech, { encoding: 'wav', speed: 1, output });
    expect(await decode(output)).toEqual(speech.samples);
  });

  it('is refused for streams, whose samples cannot be measured first', () => {
    const options: PcmEncodeOptions = {
      encoding: 'mp3',
      speed: 1,
      output: 'x.mp3',
      // @ts-expect-error encodePcm takes no loudness target
      loudness: -14,
    };
    expect(options.encoding).toBe('mp3');
  });
});

describe('POST /tts loudness', () => {
  const fileOf = (url: string) => path.join(t.outputDir, url.slice(t.config.cdnUrl.length + 1));

  it('brings the file to the target', async () => {
    const result = await postTts(t.app, { text: TEXT, voice: 'espeak-ng:en-us', loudness: -16 });
    expect(result.format).toBe('mp3');
    const measured = await ebur128(['-i', fileOf(result.url)]);
    expect(Math.abs(measured.integrated + 16), JSON.stringify(measured)).toBeLessThanOrEqual(1);
    expect(measured.truePeak).toBeLessThanOrEqual(PEAK_LIMIT);
  });

  it("keeps the voice's own level without it (or with false)", async () => {
    const own = integratedLoudness((await speak('flite:slt')).samples, 16_000);
    for (const body of [{}, { loudness: false }]) {
      const result = await postTts(t.app, { text: TEXT, voice: 'flite:slt', format: 'wav', ...body });
      expect(integratedLoudness(await decode(fileOf(result.url)), 16_000), JSON.stringify(body)).toBeCloseTo(own, 1);
    }
  });

  for (const loudness of [-60, -4, 'loud', true, null]) {
    it(`refuses loudness ${JSON.stringify(loudness)} with the documented error body`, async () => {
      const response = await t.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Hi.', voice: 'espeak-ng:en-us', loudness } });
      expect(response.statusCode, response.body).toBe(400);
      const body = response.json<ErrorBody>();
      expect(body).toEqual({
        status: 'error',
        error: { code: 'VALIDATION_ERROR', message: expect.stringContaining('loudness'), field: 'loudness', requestId: expect.any(String) },
      });
    });
  }
});
