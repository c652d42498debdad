import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gradientPixels, type Background } from '../../src/video/background.js';
import { frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import type { FrameRate } from '../../src/api/video-options.js';
import { renderVideo } from '../../src/video/render.js';
import { decodeErrors, decodeFrame, ffmpeg, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { toneSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const TEXT = 'Backgrounds behind the captions: a colour, a gradient or a picture of your own';
const speech = toneSpeech(TEXT, { wordSeconds: 0.4, gapSeconds: 0.1 });
const size = frameSize('720p', '9:16');
const captions = layoutCaptions({ text: TEXT, speech, size, aspectRatio: '9:16', fps: FPS });

const dir = useTempDir('voxreel-backgrounds-');
const image = path.join(dir, 'halves.png');
beforeAll(async () => {
  // 400×300, red on the left half and blue on the right: covering 720×1280 keeps its middle third, split at x = 360.
  await runFfmpeg([
    '-v', 'error', '-f', 'lavfi', '-i', 'color=c=0xE01010:s=200x300', '-f', 'lavfi', '-i', 'color=c=0x1030E0:s=200x300',
    '-filter_complex', '[0:v][1:v]hstack', '-frames:v', '1', image,
  ]);
});

async function render(name: string, background: Background, options: { frameRate?: FrameRate; splice?: false } = {}): Promise<string> {
  const output = path.join(dir, `${name}.mp4`);
  await renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate: 'constant', captions, background, output, ...options });
  return output;
}

function pixel(frame: Buffer, x: number, y: number, width = size.width): number[] {
  const offset = (y * width + x) * 3;
  return [frame[offset] as number, frame[offset + 1] as number, frame[offset + 2] as number];
}

function expectColour(actual: number[], hex: string, tolerance = 4): void {
  const expected = [0, 2, 4].map((at) => parseInt(hex.slice(at, at + 2), 16));
  actual.forEach((value, index) => expect(Math.abs(value - (expected[index] as number)), `${actual} vs #${hex}`).toBeLessThanOrEqual(tolerance));
}

/** PSNR-Y of two videos decoded at FPS, the lowest over all frames. */
async function minimumPsnr(a: string, b: string): Promise<number> {
  const { stderr } = await runFfmpeg(['-i', a, '-i', b, '-lavfi', `[0:v]fps=${FPS}[a];[1:v]fps=${FPS}[b];[a][b]psnr`, '-f', 'null', '-'], 60_000);
  const min = /PSNR .* min:([\d.]+|inf)/.exec(stderr)?.[1];
  return min === 'inf' ? Infinity : Number(min);
}

const lit = captions.states[3]!;

describe('backgrounds', () => {
  it('a colour fills the frame exactly', async () => {
    const frame = await decodeFrame(await render('colour', { type: 'color', color: '2E7D32' }), lit.startFrame, FPS);
    for (const [x, y] of [[0, 0], [size.width - 1, size.height - 1], [size.width / 2, 40]] as const) expectColour(pixel(frame, x, y), '2E7D32', 2);
  });

  it('a vertical gradient runs from the first colour at the top to the second at the bottom', async () => {
    const frame = await decodeFrame(await render('gradient', { type: 'gradient', colors: ['1E3A8A', 'DB2777'], direction: 'vertical' }), lit.startFrame, FPS);
    expectColour(pixel(frame, 20, 2), '1E3A8A');
    expectColour(pixel(frame, 20, size.height - 3), 'DB2777');
    expectColour(pixel(frame, 20, size.height / 2), '7D3180', 5);
  });

  it('computes gradients in every direction', () => {
    const small = { width: 3, height: 2 };
    expect([...gradientPixels(['000000', 'FFFFFF'], 'horizontal', small)]).toEqual([0, 0, 0, 128, 128, 128, 255, 255, 255, 0, 0, 0, 128, 128, 128, 255, 255, 255]);
    expect([...gradientPixels(['000000', 'FFFFFF'], 'vertical', small).subarray(0, 3)]).toEqual([0, 0, 0]);
    expect([...gradientPixels(['000000', 'FFFFFF'], 'diagonal', small).subarray(-3)]).toEqual([255, 255, 255]);
  });

  it('an image covers the frame: scaled until both sides fill it, the middle kept', async () => {
    const frame = await decodeFrame(await render('image', { type: 'image', file: image }), lit.startFrame, FPS);
    expectColour(pixel(frame, 100, 100), 'E01010', 6);
    expectColour(pixel(frame, size.width - 100, 100), '1030E0', 6);
    expectColour(pixel(frame, size.width - 100, size.height - 40), '1030E0', 6);
    // Green bands at both sides of a 400×300 image fall outside the middle 169 columns that cover 9:16: none shows,
    // and the red and blue meet in the frame's middle (a stretched or letterboxed image would show the green).
    const banded = path.join(dir, 'banded.png');
    await runFfmpeg([
      '-v', 'error', '-f', 'lavfi', '-i', 'color=c=0x10C010:s=100x300', '-f', 'lavfi', '-i', 'color=c=0xE01010:s=100x300',
      '-f', 'lavfi', '-i', 'color=c=0x1030E0:s=100x300', '-f', 'lavfi', '-i', 'color=c=0x10C010:s=100x300',
      '-filter_complex', '[0:v][1:v][2:v][3:v]hstack=inputs=4', '-frames:v', '1', banded,
    ]);
    const covered = await decodeFrame(await render('banded', { type: 'image', file: banded }), lit.startFrame, FPS);
    expectColour(pixel(covered, 2, 100), 'E01010', 8);
    expectColour(pixel(covered, size.width / 2 - 12, 100), 'E01010', 8);
    expectColour(pixel(covered, size.width / 2 + 12, 100), '1030E0', 8);
    expectColour(pixel(covered, size.width - 3, 100), '1030E0', 8);
  });

  for (const aspectRatio of ['16:9', '1:1', '4:5'] as const) {
    it(`${aspectRatio}: a gradient and an image fill the frame and decode without an error`, async () => {
      const other = frameSize('720p', aspectRatio);
      const text = 'Other shapes of frame';
      const otherSpeech = toneSpeech(text);
      const otherCaptions = layoutCaptions({ text, speech: otherSpeech, size: other, aspectRatio, fps: FPS });
      for (const background of [{ type: 'gradient', colors: ['1E3A8A', 'DB2777'], direction: 'horizontal' }, { type: 'image', file: image }] as const) {
        const output = path.join(dir, `${aspectRatio.replace(':', 'x')}-${background.type}.mp4`);
        await renderVideo(ffmpeg, { speech: otherSpeech, size: other, fps: FPS, frameRate: 'constant', captions: otherCaptions, background, output });
        expect(await decodeErrors(output)).toBe('');
        const frame = await decodeFrame(output, 3, FPS);
        // Left edge: the gradient's first colour, the image's red half; right edge: the second colour, the blue half.
        expectColour(pixel(frame, 2, 10, other.width), background.type === 'gradient' ? '1E3A8A' : 'E01010', 8);
        expectColour(pixel(frame, other.width - 3, 10, other.width), background.type === 'gradient' ? 'DB2777' : '1030E0', 8);
      }
    });
  }

  for (const frameRate of ['constant', 'variable'] as const) {
    for (const name of ['gradient', 'image'] as const) {
      it(`${frameRate} rate, ${name}: the splice gives the picture of a plain render, captions included`, async () => {
        const chosen: Background = name === 'image' ? { type: 'image', file: image } : { type: 'gradient', colors: ['0B3D2E', 'F59E0B'], direction: 'diagonal' };
        const spliced = await render(`${name}-${frameRate}`, chosen, { frameRate });
        const plain = await render(`${name}-${frameRate}-plain`, chosen, { frameRate, splice: false });
        expect(await minimumPsnr(spliced, plain)).toBeGreaterThan(48);
        expect(await decodeErrors(spliced)).toBe('');
        // The lit word is drawn over the background: yellow pixels in the caption band.
        const frame = await decodeFrame(spliced, lit.startFrame, FPS);
        let yellow = 0;
        for (let offset = 0; offset + 2 < frame.length; offset += 3) {
          if ((frame[offset] as number) > 220 && (frame[offset + 1] as number) > 180 && (frame[offset + 2] as number) < 110) yellow += 1;
        }
        expect(yellow).toBeGreaterThan(100);
      });
    }
  }
});
