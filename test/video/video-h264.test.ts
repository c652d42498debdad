import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { composeStream, H264Error, splitNalUnits, X264_OPTIONS, type StreamParts } from '../../src/video/h264/index.js';
import { toNal, toRbsp } from '../../src/video/h264/bitstream.js';
import { frameHashes, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

// A 320×240 picture: rows 0-79 above the band, the band 80-159, rows 160-239 below.
const WIDTH = 320;
const BAND = { top: 80, height: 80 };
const TOTAL = 300;
const BAND_FRAMES = [0, 1, 5, 17, 40, 41, 42, 90, 150, 299];

const work = useTempDir('voxreel-h264-');
let counter = 0;

/** x264 with the render's settings (or `x264`) over frames `frames` of a part `height` rows tall. */
async function encode(name: string, height: number, frames: readonly number[], x264: readonly string[] = X264_OPTIONS): Promise<Buffer> {
  const file = path.join(work, `${name}-${(counter += 1)}.h264`);
  const select = frames.map((frame) => `eq(n\\,${frame})`).join('+');
  // The band moves in its middle and keeps background-coloured edges, as captions do (motion vectors may reach past them).
  const source =
    name === 'band' ? `testsrc2=s=${WIDTH}x${height - 48}:r=30,pad=${WIDTH}:${height}:0:24:color=0x0F172A` : `color=c=0x0F172A:s=${WIDTH}x${height}:r=30`;
  await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', source, '-vf', `select=${select},format=yuv420p`, '-frames:v', String(frames.length), ...x264, '-fps_mode', 'passthrough', '-f', 'h264', file]);
  return readFile(file);
}

/** Per-frame MD5 of a raw H.264 stream, optionally cropped to rows [top, top + height). */
async function hashes(stream: Uint8Array, name: string, rows?: { top: number; height: number }): Promise<string[]> {
  const file = path.join(work, `${name}.out.h264`);
  await writeFile(file, stream);
  return frameHashes(file, { format: 'h264', filter: rows && `crop=${WIDTH}:${rows.height}:0:${rows.top}` });
}

async function parts(): Promise<StreamParts> {
  const [background, band, above, below] = await Promise.all([
    encode('background', 240, [0]),
    encode('band', BAND.height, BAND_FRAMES),
    encode('above', BAND.top, [0]),
    encode('below', 240 - BAND.top - BAND.height, [0]),
  ]);
  return { background, band: { stream: band, row: BAND.top / 16, frames: BAND_FRAMES, above, below }, totalFrames: TOTAL, rate: 'constant' };
}

describe('emulation prevention (7.4.1)', () => {
  /** Bytes thick with zeros and 1 to 3, where 00 00 0x sequences are common. */
  const awkward = (length: number, seed: number) => {
    let state = seed;
    const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    return Uint8Array.from({ length }, () => (next() < 0.45 ? 0 : next() < 0.5 ? 1 + Math.floor(next() * 3) : Math.floor(next() * 256)));
  };

  it('escapes every 00 00 0x in a NAL unit and gives the same bytes back', () => {
    for (let seed = 1; seed <= 2000; seed += 1) {
      const rbsp = awkward(seed % 61, seed);
      const nal = toNal(0x65, rbsp);
      expect(nal[0]).toBe(0x65);
      for (let index = 1; index + 2 < nal.length; index += 1) {
        if (nal[index] === 0 && nal[index + 1] === 0) expect(nal[index + 2]).toBeGreaterThan(2);
      }
      expect(Buffer.from(toRbsp(nal)).equals(Buffer.from(rbsp))).toBe(true);
    }
  });

  it('drops each 03 after two zeros, and only those', () => {
    expect([...toRbsp(Uint8Array.of(0x41, 0, 0, 3, 0, 0, 3, 1, 0, 3, 0, 0, 0, 3, 2))]).toEqual([0, 0, 0, 0, 1, 0, 3, 0, 0, 0, 2]);
    expect([...toNal(0x41, Uint8Array.of(0, 0, 0, 0, 4, 0, 0, 1))]).toEqual([0x41, 0, 0, 3, 0, 0, 4, 0, 0, 3, 1]);
  });
});

describe('composeStream', () => {
  it('shows each band picture from its frame until the next, over a still background, and skip pictures in between', async () => {
    const input = await parts();
    const { stream, frames } = composeStream(input);
    expect(frames).toEqual(Array.from({ length: TOTAL }, (_, frame) => frame));
    const band = await hashes(input.band!.stream, 'band-alone');
    expect(new Set(band).size).toBe(BAND_FRAMES.length);
    const held = Array.from({ length: TOTAL }, (_, frame) => band[BAND_FRAMES.filter((start) => start <= frame).length - 1]);
    expect(await hashes(stream, 'composed-band', BAND)).toEqual(held);
    const [aboveAlone] = await hashes(input.band!.above!, 'above-alone');
    expect(new Set(await hashes(stream, 'composed-above', { top: 0, height: BAND.top }))).toEqual(new Set([aboveAlone]));
    // A skip picture is a dozen bytes or so.
    expect(splitNalUnits(stream).length).toBeLessThan(TOTAL + 3 * BAND_FRAMES.length + 5);
  });

  it('variable rate: only the pictures that change and the last, the same frames once held', async () => {
    const input = await parts();
    const constant = composeStream(input);
    const variable = composeStream({ ...input, rate: 'variable' });
    expect(variable.frames).toEqual(BAND_FRAMES);
    const [all, changing] = await Promise.all([hashes(constant.stream, 'constant'), hashes(variable.stream, 'variable')]);
    expect(changing).toEqual(BAND_FRAMES.map((frame) => all[frame]));
  });

  it('without a band: the background, then skip pictures', async () => {
    const background = await encode('background', 240, [0]);
    const { stream, frames } = composeStream({ background, totalFrames: 50, rate: 'variable' });
    expect(frames).toEqual([0, 49]);
    const decoded = await hashes(stream, 'still');
    expect(decoded).toHaveLength(2);
    expect(decoded[1]).toBe(decoded[0]);
  });

  it('refuses what it cannot splice', async () => {
    const input = await parts();
    const band = input.band!;
    expect(() => composeStream({ ...input, band: { ...band, frames: BAND_FRAMES.slice(1) } })).toThrow(H264Error);
    expect(() => composeStream({ ...input, totalFrames: 299 })).toThrow(/past the last frame/);
    expect(() => composeStream({ ...input, band: { ...band, row: 4 } })).toThrow(/does not fit/);
    const cabac = await encode('band', BAND.height, BAND_FRAMES, ['-c:v', 'libx264', '-preset', 'veryfast', '-bf', '0']);
    expect(() => composeStream({ ...input, band: { ...band, stream: cabac } })).toThrow(/CABAC/);
    const deblocked = await encode('band', BAND.height, BAND_FRAMES, ['-c:v', 'libx264', '-preset', 'ultrafast', '-bf', '0', '-x264-params', 'deblock=1']);
    expect(() => composeStream({ ...input, band: { ...band, stream: deblocked } })).toThrow(/deblocking/);
    const bFrames = await encode('band', BAND.height, BAND_FRAMES, ['-c:v', 'libx264', '-preset', 'ultrafast', '-x264-params', 'bframes=2:b-adapt=0:no-deblock=1']);
    expect(() => composeStream({ ...input, band: { ...band, stream: bFrames } })).toThrow(H264Error);
  });
});
