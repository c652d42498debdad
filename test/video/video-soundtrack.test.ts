import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { integratedLoudness } from '../../src/speech/loudness.js';
import { frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { renderVideo, type RenderOptions } from '../../src/video/render.js';
import { encodeSoundtrack, encodeUnderCeiling } from '../../src/video/soundtrack.js';
import { multipartForm, useTestApp } from '../helpers/helpers.js';
import { ebur128, ffmpeg, rawStreams, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { toneSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const TEXT = 'one two three four five six seven eight nine ten';
// 220 Hz words of 0.5 s with 0.6 s gaps: long enough for the music to come back up between them.
const speech = toneSpeech(TEXT, { wordSeconds: 0.5, gapSeconds: 0.6 });
const size = frameSize('720p', '16:9');
const captions = layoutCaptions({ text: TEXT, speech, size, aspectRatio: '16:9', fps: FPS });

const dir = useTempDir('voxreel-soundtrack-');
const music = path.join(dir, 'music.wav');
beforeAll(async () => {
  // Three seconds of stereo: a 1 kHz tone on the left, 1.5 kHz on the right. Shorter than the video, so it must
  // loop; far from the voice's 220 Hz.
  await runFfmpeg([
    '-v', 'error', '-f', 'lavfi', '-i', 'sine=f=1000:d=3:sample_rate=44100', '-f', 'lavfi', '-i', 'sine=f=1500:d=3:sample_rate=44100',
    '-filter_complex', '[0][1]join=inputs=2:channel_layout=stereo', music,
  ]);
});

/** Within this of the target, with music or without, as ffmpeg's ebur128 reads the rendered file. */
const LOUDNESS_TOLERANCE = 0.3;
/** How far a measured loudness is from its target, in the tenths ebur128 reports (−14.3 + 14 is 0.30000000000000007 in floating point). */
const loudnessOff = (measured: number, target: number) => Number(Math.abs(measured - target).toFixed(1));

async function render(name: string, options: Partial<RenderOptions> = {}): Promise<string> {
  const output = path.join(dir, `${name}.mp4`);
  await renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate: 'constant', captions, output, ...options });
  return output;
}

/** RMS level in dBFS of the audio around `hz` (a narrow band-pass), in windows of `seconds`: of all channels mixed, or of one. */
async function bandLevels(file: string, hz: number, seconds = 0.1, channel?: 0 | 1): Promise<number[]> {
  const mono = channel === undefined ? ['-ac', '1'] : ['-af', `pan=mono|c0=c${channel},bandpass=f=${hz}:width_type=h:w=100`];
  const band = channel === undefined ? ['-af', `bandpass=f=${hz}:width_type=h:w=100`] : [];
  const { stdout } = await runFfmpeg(['-v', 'error', '-i', file, '-map', '0:a:0', ...band, ...mono, '-ar', '48000', '-f', 's16le', 'pipe:1']);
  const samples = new Int16Array(stdout.buffer, stdout.byteOffset, Math.floor(stdout.byteLength / 2));
  const window = Math.round(48_000 * seconds);
  const levels: number[] = [];
  for (let start = 0; start + window <= samples.length; start += window) {
    let sum = 0;
    for (let i = start; i < start + window; i += 1) sum += ((samples[i] as number) / 32768) ** 2;
    levels.push(10 * Math.log10(sum / window + 1e-12));
  }
  return levels;
}

/** bandLevels of the left channel and of the right. */
const stereoBand = async (file: string, hz: number) => Promise.all([bandLevels(file, hz, 0.1, 0), bandLevels(file, hz, 0.1, 1)]);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

describe('the soundtrack of a video', () => {
  it('is mono, 48 kHz at -14 LUFS with its true peak at most -1 dBTP by default, and stereo when asked', async () => {
    for (const channels of [undefined, 2] as const) {
      const file = await render(`default-${channels ?? ''}`, channels ? { channels } : {});
      const [, audio] = await rawStreams(file);
      expect(audio).toMatchObject({ codec_name: 'aac', sample_rate: '48000', channels: channels ?? 1 });
      const { integrated, truePeak } = await ebur128(file);
      expect(loudnessOff(integrated, -14)).toBeLessThanOrEqual(LOUDNESS_TOLERANCE);
      expect(truePeak).toBeLessThanOrEqual(-1);
    }
  });

  it('meets another target, or keeps the voice level when asked to', async () => {
    expect(loudnessOff((await ebur128(await render('quiet', { loudness: -23 }))).integrated, -23)).toBeLessThanOrEqual(LOUDNESS_TOLERANCE);
    const own = integratedLoudness(speech.samples, speech.sampleRate);
    expect(Math.abs((await ebur128(await render('own', { loudness: null }))).integrated - own)).toBeLessThanOrEqual(1);
  });

  it('puts music under the narration: looped to the end, faded in and out, ducked while the voice speaks', async () => {
    const file = await render('music', { music: { file: music } });
    const [, audio] = await rawStreams(file);
    expect(audio).toMatchObject({ sample_rate: '48000', channels: 2 });
    const { integrated, truePeak } = await ebur128(file);
    expect(loudnessOff(integrated, -14)).toBeLessThanOrEqual(LOUDNESS_TOLERANCE);
    expect(truePeak).toBeLessThanOrEqual(-1);

    const levels = await bandLevels(file, 1000);
    const at = (seconds: number) => levels[Math.floor(seconds / 0.1)] as number;
    const during = speech.words.slice(1, -1).map((word) => at(word.start + 0.3));
    // The loudest tenth of each gap: the music is back up by then (release 0.4 s).
    const gap = (word: { end: number }) => Math.max(...[0.2, 0.3, 0.4, 0.5].map((after) => at(word.end + after)));
    const between = speech.words.slice(1, -2).map(gap);
    expect(median(between) - median(during), `between ${between.map(Math.round)} during ${during.map(Math.round)}`).toBeGreaterThan(8);
    // Looped: late in the video (past the 3 s of the file, before the fade out) as loud as early on.
    expect(Math.abs(gap(speech.words.at(-3)!) - gap(speech.words[1]!))).toBeLessThan(2);
    // Faded: quieter in its first tenth of a second and its last than in the gaps.
    expect(at(0)).toBeLessThan(median(between) - 6);
    expect(levels.at(-1)!).toBeLessThan(median(between) - 6);
  });

  it('with music is stereo: the music keeps its stereo image, the voice sits in the middle; mono when asked, at the target', async () => {
    const file = await render('music-stereo', { music: { file: music }, loudness: -16 });
    const [left, right] = await stereoBand(file, 1000);
    const [leftHigh, rightHigh] = await stereoBand(file, 1500);
    const gaps = speech.words.slice(1, -2).map((word) => Math.floor((word.end + 0.45) / 0.1));
    const inGaps = (levels: number[]) => median(gaps.map((index) => levels[index] as number));
    // 1 kHz on the left only, 1.5 kHz on the right only, as in the music (the band-pass lets the other tone through 18 dB down).
    expect(inGaps(left) - inGaps(right)).toBeGreaterThan(12);
    expect(inGaps(rightHigh) - inGaps(leftHigh)).toBeGreaterThan(12);
    // The voice's 220 Hz alike in both channels.
    const [voiceLeft, voiceRight] = await stereoBand(file, 220);
    const words = speech.words.slice(1, -1).map((word) => Math.floor((word.start + 0.3) / 0.1));
    expect(Math.abs(median(words.map((index) => voiceLeft[index] as number)) - median(words.map((index) => voiceRight[index] as number)))).toBeLessThan(0.5);
    expect(loudnessOff((await ebur128(file)).integrated, -16)).toBeLessThanOrEqual(LOUDNESS_TOLERANCE);

    const mono = await render('music-mono', { music: { file: music }, channels: 1 });
    expect((await rawStreams(mono))[1]).toMatchObject({ channels: 1 });
    expect(loudnessOff((await ebur128(mono)).integrated, -14)).toBeLessThanOrEqual(LOUDNESS_TOLERANCE);
  });

  it('a soundtrack whose codec lifted a peak over -1 dBTP is written again, lower', async () => {
    // Loud, and aimed at +1 dBTP on purpose: the peaks then come out over the ceiling.
    const options = { speech, seconds: speech.duration, loudness: -3, music: { file: music }, peakCeiling: 1, output: path.join(dir, 'peaks.aac') };
    const peak = await encodeSoundtrack(ffmpeg, options);
    const metered = (await ebur128(options.output)).truePeak;
    expect(metered).toBeGreaterThan(-1);
    // The peak it answers is the written file's, heard beside the encode: never under ffmpeg's meter, at most 0.5 dB over.
    expect(peak).toBeGreaterThanOrEqual(metered);
    expect(peak).toBeLessThan(metered + 0.5);
    // The same soundtrack kept under the ceiling: written again until its peaks are.
    await encodeUnderCeiling(ffmpeg, options);
    const after = await ebur128(options.output);
    expect(after.truePeak).toBeLessThanOrEqual(-1);
  });

  it("answers the true peak of the voice alone as written, heard beside the encode (ffmpeg's meter agrees), mono and stereo", async () => {
    for (const channels of [1, 2] as const) {
      const output = path.join(dir, `voice-peak-${channels}.aac`);
      const peak = await encodeSoundtrack(ffmpeg, { speech, seconds: speech.duration, loudness: -14, channels, output });
      const metered = await ebur128(output);
      expect(loudnessOff(metered.integrated, -14)).toBeLessThanOrEqual(LOUDNESS_TOLERANCE);
      expect(peak).toBeGreaterThanOrEqual(metered.truePeak);
      expect(peak).toBeLessThan(metered.truePeak + 0.5);
      expect((await rawStreams(output))[0]).toMatchObject({ codec_name: 'aac', channels, sample_rate: '48000' });
    }
    expect(await encodeSoundtrack(ffmpeg, { speech, seconds: speech.duration, output: path.join(dir, 'voice-level.aac') })).toBeUndefined();
  });

  it('without music the band of the music frequency holds only what the voice leaks into it', async () => {
    // The left channel, where the music's 1 kHz is.
    const withMusic = await bandLevels(await render('with-music', { music: { file: music } }), 1000, 0.1, 0);
    const without = await bandLevels(await render('no-music'), 1000, 0.1, 0);
    const gaps = speech.words.slice(1, -2).map((word) => Math.floor((word.end + 0.45) / 0.1));
    expect(median(gaps.map((index) => withMusic[index]!)) - Math.max(...without)).toBeGreaterThan(12);
  });
});

describe('POST /tts-video with music and a loudness target', () => {
  const t = useTestApp();
  const upload = async (name: string, content: Buffer, type: string) => {
    const response = await t.app.inject({ method: 'POST', url: '/assets', ...multipartForm([{ name: 'file', filename: name, type, content }]) });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  };
  const post = (body: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/tts-video', payload: { text: 'Music under my words.', voice: 'espeak-ng:en-us', resolution: '720p', ...body } });

  const rendered = async (name: string, body: Record<string, unknown>) => {
    const response = await post(body);
    expect(response.statusCode, response.body).toBe(200);
    const file = path.join(dir, `${name}.mp4`);
    await writeFile(file, (await t.fetchFile(response.json<{ url: string }>().url)).body);
    return file;
  };

  it('mixes an uploaded track under the voice at the asked loudness, in stereo unless asked for mono', async () => {
    const id = await upload('music.wav', await readFile(music), 'audio/wav');
    for (const [name, body, target, channels] of [
      ['http-16', { music: { id, volume: -10 }, loudness: -16 }, -16, 2],
      ['http-14', { music: { id } }, -14, 2],
      ['http-mono', { music: { id }, channels: 1 }, -14, 1],
      ['http-no-music-stereo', { channels: 2 }, -14, 2],
      ['http-no-music', {}, -14, 1],
    ] as const) {
      const file = await rendered(name, body);
      expect((await rawStreams(file))[1], name).toMatchObject({ codec_name: 'aac', channels });
      const { integrated, truePeak } = await ebur128(file);
      expect(loudnessOff(integrated, target), `${name}: ${integrated} LUFS`).toBeLessThanOrEqual(LOUDNESS_TOLERANCE);
      expect(truePeak, name).toBeLessThanOrEqual(-1);
      if ('music' in body) expect(Math.max(...(await bandLevels(file, 1000)))).toBeGreaterThan(-40);
    }
  });

  it('brings a voice whose peaks stand far above its loudness to -14 LUFS, mono and stereo (issue 38: Piper at -15.6)', async () => {
    // Piper's joe peaks some 19-20 dB over its loudness: the limiter's bounded makeup left a short sentence 1.5 LU under.
    for (const channels of [1, 2]) {
      const file = await rendered(`piper-${channels}`, { text: 'Ready for launch? Tap like if it helped.', voice: 'piper:en_US-joe-medium', channels });
      const { integrated, truePeak } = await ebur128(file);
      expect(loudnessOff(integrated, -14), `${channels} channel(s): ${integrated} LUFS`).toBeLessThanOrEqual(LOUDNESS_TOLERANCE);
      expect(truePeak).toBeLessThanOrEqual(-1);
    }
  });

  it('refuses an image as music, an unknown track and a bad loudness', async () => {
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=64x64', '-frames:v', '1', path.join(dir, 'red.png')]);
    const image = await upload('red.png', await readFile(path.join(dir, 'red.png')), 'image/png');
    for (const [body, status, code] of [
      [{ music: { id: image } }, 422, 'UNKNOWN_ASSET'],
      [{ music: { id: 'AAAAAAAAAAAAAAAAAAAAAA' } }, 422, 'UNKNOWN_ASSET'],
      [{ music: { id: image, volume: 6 } }, 400, 'VALIDATION_ERROR'],
      [{ loudness: -60 }, 400, 'VALIDATION_ERROR'],
      [{ loudness: true }, 400, 'VALIDATION_ERROR'],
      [{ channels: 3 }, 400, 'VALIDATION_ERROR'],
    ] as const) {
      const response = await post(body);
      expect(response.statusCode, response.body).toBe(status);
      expect(response.json()).toMatchObject({ error: { code } });
    }
  });
});
