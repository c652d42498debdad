import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../src/process.js';
import { H264Error, splitNalUnits, weaveConstantRate } from '../src/video/h264.js';
import { ffmpeg } from './video-helpers.js';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'voxreel-h264-'));
});
afterAll(async () => rm(work, { recursive: true, force: true }));

/** Encodes the given frames of a moving test pattern as a raw H.264 stream with x264. */
async function encode(frames: readonly number[], x264: string[], name: string): Promise<Buffer> {
  const file = path.join(work, `${name}.h264`);
  const select = frames.map((frame) => `eq(n\\,${frame})`).join('+');
  await runProcess(
    ffmpeg.tools.ffmpeg,
    ['-v', 'error', '-nostdin', '-f', 'lavfi', '-i', 'testsrc2=s=320x240:r=30', '-vf', `select=${select},format=yuv420p`, '-frames:v', String(frames.length), '-c:v', 'libx264', ...x264, '-fps_mode', 'passthrough', '-f', 'h264', file],
    { timeoutMs: 30_000 },
  );
  return readFile(file);
}

async function decodeHashes(stream: Buffer, name: string): Promise<string[]> {
  const file = path.join(work, `${name}.decoded.h264`);
  await writeFile(file, stream);
  const { stdout } = await runProcess(ffmpeg.tools.ffmpeg, ['-v', 'error', '-nostdin', '-f', 'h264', '-i', file, '-f', 'framemd5', 'pipe:1'], { timeoutMs: 30_000 });
  return stdout
    .toString('utf8')
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split(',').at(-1)?.trim() ?? '');
}

describe('weaveConstantRate', () => {
  it('repeats each coded picture exactly until the next, across IDRs, slices and frame_num wrap-around', async () => {
    const frames = [0, 1, 5, 17, 40, 41, 42, 90, 150, 299];
    const distinct = await encode(frames, ['-preset', 'ultrafast', '-bf', '0', '-x264-params', 'keyint=4:scenecut=0:slices=3'], 'sliced');
    const woven = weaveConstantRate(distinct, frames, 300);
    const [coded, decoded] = await Promise.all([decodeHashes(distinct, 'distinct'), decodeHashes(woven, 'woven')]);
    expect(coded).toHaveLength(frames.length);
    expect(new Set(coded).size).toBe(frames.length);
    const expected = Array.from({ length: 300 }, (_, frame) => coded[frames.filter((start) => start <= frame).length - 1]);
    expect(decoded).toEqual(expected);
    // A skip picture is a dozen bytes or so.
    expect(woven.length - distinct.length).toBeLessThan((300 - frames.length) * 20);
    expect(splitNalUnits(woven).length).toBeGreaterThan(300);
  });

  it('refuses what it cannot weave', async () => {
    const frames = [0, 10, 20];
    const plain = await encode(frames, ['-preset', 'ultrafast', '-bf', '0'], 'plain');
    expect(() => weaveConstantRate(plain, [0, 10], 30)).toThrow(H264Error);
    expect(() => weaveConstantRate(plain, [0, 10, 30], 30)).toThrow(/past the last frame/);
    expect(() => weaveConstantRate(plain, [0, 20, 10], 30)).toThrow(/increase/);
    const cabac = await encode(frames, ['-preset', 'veryfast', '-bf', '0'], 'cabac');
    expect(() => weaveConstantRate(cabac, frames, 30)).toThrow(/CABAC/);
    const bFrames = await encode([0, 1, 2, 3, 4], ['-preset', 'ultrafast', '-x264-params', 'bframes=2:b-adapt=0'], 'bframes');
    expect(() => weaveConstantRate(bFrames, [0, 1, 2, 3, 4], 30)).toThrow(H264Error);
  });
});
