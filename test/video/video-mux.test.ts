import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAdts } from '../../src/media/adts.js';
import { topLevelBoxes } from '../../src/media/mp4-info.js';
import { writeMp4, type Mp4Audio, type Mp4Video } from '../../src/media/mp4-writer.js';
import { runProcess } from '../../src/media/process.js';
import { BT709_COLOUR, H264Error, mp4Samples } from '../../src/video/h264/index.js';
import { AAC_PRIMING } from '../../src/video/soundtrack.js';
import { decodeErrors, ffmpeg, frameHashes, probe, rawStreams, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const dir = useTempDir('voxreel-mux-');
const FPS = 30;
const SIZE = { width: 320, height: 240 };
/** A sound whose length is no whole number of AAC frames. */
const SOUND_SAMPLES = 48_000 + 777;

/** x264 as the plain path runs it (no B-frames), an IDR picture every 15, 24 numbered pictures. */
async function pictureStream(): Promise<Buffer> {
  const file = path.join(dir, 'picture.h264');
  await runFfmpeg(['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=s=${SIZE.width}x${SIZE.height}:r=${FPS}`, '-frames:v', '24', '-c:v', 'libx264', '-preset', 'ultrafast', '-bf', '0', '-g', '15', '-pix_fmt', 'yuv420p', '-f', 'h264', file]);
  return readFile(file);
}

/** ffmpeg's AAC (as the soundtrack runs it) of a 440 Hz tone SOUND_SAMPLES long, stereo at 48 kHz, as ADTS. */
async function soundStream(): Promise<Buffer> {
  const file = path.join(dir, 'sound.aac');
  await runFfmpeg(['-v', 'error', '-y', '-f', 'lavfi', '-i', `sine=f=440:r=48000,atrim=end_sample=${SOUND_SAMPLES},pan=stereo|c0=c0|c1=0.5*c0`, '-c:a', 'aac', '-b:a', '96k', '-f', 'adts', file]);
  return readFile(file);
}

/** Decoded PCM (s16le, stereo) of a file's first audio stream, with ffmpeg's own options before the input. */
async function pcm(file: string, inputOptions: readonly string[] = []): Promise<Buffer> {
  return (await runFfmpeg(['-v', 'error', ...inputOptions, '-i', file, '-map', '0:a:0', '-f', 's16le', '-ac', '2', 'pipe:1'])).stdout;
}

async function packets(file: string, stream: 'v' | 'a'): Promise<string[][]> {
  const { stdout } = await runProcess(ffmpeg.tools.ffprobe, ['-v', 'error', '-select_streams', `${stream}:0`, '-show_entries', 'packet=pts_time,duration_time,flags', '-of', 'csv=p=0', file], { timeoutMs: 30_000 });
  return stdout.toString('utf8').trim().split('\n').map((line) => line.split(','));
}

describe('the MP4 written in process (H.264 and AAC, moov first)', () => {
  const write = async (name: string, frames: number[], totalFrames: number) => {
    const [picture, sound] = await Promise.all([pictureStream(), soundStream()]);
    const { samples, sync, avcC } = mp4Samples(picture);
    const tick = 512;
    const video: Mp4Video = { ...SIZE, avcC, colour: BT709_COLOUR, samples, sync, starts: frames.map((frame) => frame * tick), end: totalFrames * tick, timescale: FPS * tick };
    const audio: Mp4Audio = { ...parseAdts(sound), priming: AAC_PRIMING, length: SOUND_SAMPLES };
    const file = path.join(dir, `${name}.mp4`);
    await writeMp4(file, video, audio);
    return { file, picture: path.join(dir, 'picture.h264'), sound: path.join(dir, 'sound.aac') };
  };

  it('holds the same pictures and sound as the streams it was made from, each picture at its frame, the priming cut', async () => {
    // A variable-rate picture: 24 pictures standing at these frames, the last lasting to frame 60.
    const frames = [0, 1, 2, 5, 9, 10, 11, 12, 13, 14, 15, 16, 20, 21, 22, 23, 24, 30, 31, 40, 41, 42, 50, 55];
    const { file, picture, sound } = await write('variable', frames, 60);
    expect((await topLevelBoxes(file)).map(({ type }) => type)).toEqual(['ftyp', 'moov', 'mdat']);
    expect(await decodeErrors(file)).toBe('');
    expect(await frameHashes(file)).toEqual(await frameHashes(picture, { format: 'h264' }));

    const pictures = await packets(file, 'v');
    expect(pictures.map(([time]) => Number(time))).toEqual(frames.map((frame) => Number((frame / FPS).toFixed(6))));
    expect(pictures.map(([, duration]) => Math.round(Number(duration) * FPS))).toEqual(frames.map((frame, index) => (frames[index + 1] ?? 60) - frame));
    // IDR pictures every 15 pictures (x264's -g), and only those, are sync samples.
    expect(pictures.flatMap(([, , flags], index) => (flags?.startsWith('K') ? [index] : []))).toEqual([0, 15]);

    // The sound: the ADTS stream's samples after the encoder's priming (ffmpeg decodes the last frame whole; the
    // edit list's end, which players stop at, is the track's duration below).
    const played = await pcm(file);
    const adts = await pcm(sound);
    expect(played.length).toBeGreaterThanOrEqual(SOUND_SAMPLES * 4);
    expect(played.subarray(0, SOUND_SAMPLES * 4).equals(adts.subarray(AAC_PRIMING * 4, (AAC_PRIMING + SOUND_SAMPLES) * 4))).toBe(true);

    const info = await probe(file);
    expect(info.duration).toBeCloseTo(2, 3);
    expect(info.streams.map(({ codecName }) => codecName)).toEqual(['h264', 'aac']);
    expect(info.streams[1]).toMatchObject({ channels: 2, sampleRate: 48_000, duration: Number((SOUND_SAMPLES / 48_000).toFixed(3)) });
    const [video] = await rawStreams(file);
    expect(video).toMatchObject({ width: SIZE.width, height: SIZE.height, color_primaries: 'bt709', nb_frames: '24' });
  });

  it('interleaves the tracks: both take turns through the file (no track all at its end)', async () => {
    const { file } = await write('constant', Array.from({ length: 24 }, (_, frame) => frame), 24);
    // Byte positions of the packets: the first sound comes before the last picture, the first picture before the last sound.
    const positions = async (stream: 'v' | 'a') => {
      const { stdout } = await runProcess(ffmpeg.tools.ffprobe, ['-v', 'error', '-select_streams', `${stream}:0`, '-show_entries', 'packet=pos', '-of', 'csv=p=0', file], { timeoutMs: 30_000 });
      return stdout.toString('utf8').split(/[\s,]+/).filter(Boolean).map(Number);
    };
    const [pictures, sound] = await Promise.all([positions('v'), positions('a')]);
    expect(Math.min(...sound)).toBeLessThan(Math.max(...pictures));
    expect(Math.min(...pictures)).toBeLessThan(Math.max(...sound));
    expect(await decodeErrors(file)).toBe('');
  });

  it('refuses what it cannot write: no pictures, pictures without times, too few AAC frames, a broken ADTS stream', async () => {
    expect(() => mp4Samples(Buffer.from([0, 0, 1, 0x09, 0xf0]))).toThrow(H264Error);
    const [picture, sound] = await Promise.all([pictureStream(), soundStream()]);
    const { samples, sync, avcC } = mp4Samples(picture);
    const video: Mp4Video = { ...SIZE, avcC, colour: BT709_COLOUR, samples, sync, starts: [0], end: 1, timescale: FPS };
    const audio: Mp4Audio = { ...parseAdts(sound), priming: AAC_PRIMING, length: SOUND_SAMPLES };
    await expect(writeMp4(path.join(dir, 'untimed.mp4'), video, audio)).rejects.toThrow(/do not match/);
    const timed = { ...video, starts: samples.map((_, index) => index), end: samples.length };
    await expect(writeMp4(path.join(dir, 'short.mp4'), timed, { ...audio, length: SOUND_SAMPLES * 2 })).rejects.toThrow(/fewer AAC frames/);
    expect(() => parseAdts(sound.subarray(0, sound.length - 3))).toThrow(/cannot hold/);
    expect(() => parseAdts(Buffer.concat([Buffer.from('ID3'), sound]))).toThrow(/no frame header/);
  });
});
