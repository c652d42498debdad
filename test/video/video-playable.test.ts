import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { topLevelBoxes } from '../../src/media/mp4-info.js';
import { CAPTION_COLOURS } from '../../src/video/ass.js';
import { frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import type { FrameRate } from '../../src/api/video-options.js';
import { BACKGROUND_COLOUR, renderVideo } from '../../src/video/render.js';
import { decodeErrors, ffmpeg, keyframeTimes, rawStreams, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { toneSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const TEXT = 'Seeking needs keyframes and colours need their tags in every file we make for people to post';
const speech = toneSpeech(TEXT, { wordSeconds: 0.4, gapSeconds: 0.1 });
const size = frameSize('720p', '9:16');
const captions = layoutCaptions({ text: TEXT, speech, size, aspectRatio: '9:16', fps: FPS });

const dir = useTempDir('voxreel-playable-');

async function render(name: string, options: { frameRate?: FrameRate; keyframeSeconds?: number; splice?: false } = {}): Promise<string> {
  const output = path.join(dir, `${name}.mp4`);
  await renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate: 'constant', captions, output, ...options });
  return output;
}

async function decodesCleanly(file: string): Promise<void> {
  expect(await decodeErrors(file)).toBe('');
}

/** Limited-range Y'CbCr of an sRGB hex colour with the luma weights of a matrix: BT.709 for HD, BT.601 for SD. */
function ycbcr(hex: string, matrix: 'bt709' | 'bt601'): [number, number, number] {
  const [kr, kb] = matrix === 'bt709' ? [0.2126, 0.0722] : [0.299, 0.114];
  const [r, g, b] = [0, 2, 4].map((at) => parseInt(hex.slice(at, at + 2), 16) / 255) as [number, number, number];
  const y = kr * r + (1 - kr - kb) * g + kb * b;
  return [16 + 219 * y, 128 + (112 * (b - y)) / (1 - kb), 128 + (112 * (r - y)) / (1 - kr)];
}

/** The most common Y'CbCr triple among pixels of frame `index` that `near` accepts, decoded without any conversion. */
async function commonYuv(file: string, index: number, near: (yuv: [number, number, number]) => boolean): Promise<[number, number, number]> {
  const { stdout } = await runFfmpeg(['-v', 'error', '-i', file, '-vf', `select=eq(n\\,${index})`, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'yuv444p', 'pipe:1']);
  const plane = size.width * size.height;
  const counts = new Map<string, number>();
  for (let i = 0; i < plane; i += 1) {
    const yuv: [number, number, number] = [stdout[i] as number, stdout[plane + i] as number, stdout[2 * plane + i] as number];
    if (near(yuv)) counts.set(yuv.join(','), (counts.get(yuv.join(',')) ?? 0) + 1);
  }
  const [best] = [...counts].sort((a, b) => b[1] - a[1]);
  if (!best) throw new Error('No pixel of that colour in the frame');
  return best[0].split(',').map(Number) as [number, number, number];
}

describe('videos players can seek and show in the right colours', () => {
  const expectedKeyframes = (seconds: number) => Array.from({ length: Math.ceil(captions.frames / (seconds * FPS)) }, (_, index) => index * seconds);

  for (const frameRate of ['constant', 'variable'] as const) {
    it(`${frameRate} rate, spliced: a keyframe every 2 s by default and every 1 s when asked, decoding without an error`, async () => {
      const everyTwo = await render(`${frameRate}-2`, { frameRate });
      const everyOne = await render(`${frameRate}-1`, { frameRate, keyframeSeconds: 1 });
      expect(speech.duration).toBeGreaterThan(8);
      expect(await keyframeTimes(everyTwo)).toEqual(expectedKeyframes(2));
      expect(await keyframeTimes(everyOne)).toEqual(expectedKeyframes(1));
      await decodesCleanly(everyTwo);
      await decodesCleanly(everyOne);
    });
  }

  it('puts the moov box first (playback starts before the whole file is there), nothing between it and the media, at both rates', async () => {
    for (const frameRate of ['constant', 'variable'] as const) {
      const file = await render(`boxes-${frameRate}`, { frameRate });
      expect((await topLevelBoxes(file)).map(({ type }) => type), frameRate).toEqual(['ftyp', 'moov', 'mdat']);
      await decodesCleanly(file);
    }
  });

  it('the plain render (the splicer fallback) has the same keyframes', async () => {
    expect(await keyframeTimes(await render('plain', { splice: false }))).toEqual(expectedKeyframes(2));
  });

  it('BT.709: the stream says so (VUI), the MP4 says so (colr nclx 1/1/1), and the pixels are BT.709', async () => {
    const file = await render('colour');
    const [video] = await rawStreams(file);
    expect(video).toMatchObject({ color_space: 'bt709', color_primaries: 'bt709', color_transfer: 'bt709', color_range: 'tv' });
    const bytes = await readFile(file);
    const colr = bytes.indexOf('colrnclx');
    expect(colr).toBeGreaterThan(0);
    expect([bytes.readUInt16BE(colr + 8), bytes.readUInt16BE(colr + 10), bytes.readUInt16BE(colr + 12)]).toEqual([1, 1, 1]);

    const lit = captions.states[2]!;
    // Chroma is averaged over 2×2 pixels and quantised: within 2.5 levels; BT.601 would put Cr 4.6 levels off.
    const highlight = await commonYuv(file, lit.startFrame, ([y, cb]) => y > 150 && cb < 100);
    const expected = ycbcr(CAPTION_COLOURS.highlight, 'bt709');
    highlight.forEach((value, index) => expect(Math.abs(value - expected[index]!), `highlight ${highlight} vs ${expected}`).toBeLessThanOrEqual(2.5));
    expect(Math.abs(highlight[2] - ycbcr(CAPTION_COLOURS.highlight, 'bt601')[2])).toBeGreaterThan(3);
    const background = await commonYuv(file, lit.startFrame, ([y]) => y < 60);
    ycbcr(BACKGROUND_COLOUR, 'bt709').forEach((value, index) => expect(Math.abs(background[index]! - value), `background ${background}`).toBeLessThanOrEqual(1.5));
  });
});
