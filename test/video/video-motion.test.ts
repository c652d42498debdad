// Issue 24: pictures that move. An image background zoomed or panned over the whole video (Ken Burns) and a progress
// bar along the bottom, encoded whole in one x264 pass (renderPath `moving`); frames decoded and compared.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TtsVideoResponse } from '../../src/api/video.js';
import type { Background } from '../../src/video/background.js';
import { frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { renderVideo, type RenderedVideo, type RenderOptions } from '../../src/video/render.js';
import { decodeErrors, decodeFrame, ffmpeg, keyframeTimes, probe, rawStreams, runFfmpeg, screenshot } from '../helpers/media.js';
import { uploadAsset, useTestApp } from '../helpers/helpers.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { toneSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const speech = toneSpeech('One two three four five six seven eight nine ten', { wordSeconds: 0.3, gapSeconds: 0.1 });
const size = frameSize('720p', '9:16');
const dir = useTempDir('voxreel-motion-');
const image = path.join(dir, 'scene.png');

beforeAll(async () => {
  // Detail everywhere (a moving test pattern's first frame), so that any shift or zoom shows in the pixels.
  await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=900x1400', '-frames:v', '1', image]);
});

/** Rendered at a variable frame rate asked for; `pictures`: the pictures the file holds. */
async function render(name: string, options: Partial<RenderOptions>): Promise<{ file: string; rendered: RenderedVideo; frames: number; pictures: number }> {
  const file = path.join(dir, `${name}.mp4`);
  const rendered = await renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate: 'variable', output: file, ...options });
  expect(await decodeErrors(file)).toBe('');
  const video = (await probe(file)).streams.find((stream) => stream.codecType === 'video');
  const [stream] = (await rawStreams(file)).filter((entry) => entry.codec_type === 'video');
  return { file, rendered, frames: Math.round((video?.duration ?? 0) * FPS), pictures: Number(stream?.nb_frames) };
}

/** Peak signal-to-noise ratio of two RGB24 frames, in dB: above ~30 the same picture, under ~20 a different one. */
function psnr(a: Buffer, b: Buffer): number {
  let squares = 0;
  for (let index = 0; index < a.length; index += 1) squares += ((a[index] as number) - (b[index] as number)) ** 2;
  const mse = squares / a.length;
  return mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse);
}

const moving = (motion: 'zoom-in' | 'zoom-out' | 'pan'): Background => ({ type: 'image', file: image, motion });

describe('a moving background (Ken Burns)', () => {
  it('zooms in from the whole image to its middle, zooms out the other way, and pans from the left edge to the right', async () => {
    const still = await render('still', { background: { type: 'image', file: image } });
    const zoomIn = await render('zoom-in', { background: moving('zoom-in') });
    const zoomOut = await render('zoom-out', { background: moving('zoom-out') });
    const pan = await render('pan', { background: moving('pan') });
    expect(still.rendered).toMatchObject({ renderPath: 'spliced', frameRate: 'variable' });
    // The still one holds only the pictures where its captions change.
    expect(still.pictures).toBeLessThan(still.frames);
    for (const video of [zoomIn, zoomOut, pan]) {
      // A picture for every 1/fps although variable was asked: the picture changes in every one.
      expect(video.rendered).toMatchObject({ renderPath: 'moving', frameRate: 'constant' });
      expect(video.pictures).toBe(still.frames);
    }
    const last = still.frames - 1;
    const frame = (video: { file: string }, index: number) => decodeFrame(video.file, index, FPS);
    const stillFrame = await frame(still, 0);
    // Zooming in starts on the whole image (the still's cover) and ends on its middle; zooming out is the reverse.
    expect(psnr(await frame(zoomIn, 0), stillFrame)).toBeGreaterThan(28);
    expect(psnr(await frame(zoomIn, last), stillFrame)).toBeLessThan(20);
    expect(psnr(await frame(zoomOut, last), stillFrame)).toBeGreaterThan(28);
    expect(psnr(await frame(zoomOut, 0), await frame(zoomIn, last))).toBeGreaterThan(28);
    // Halfway, the pan shows the middle of the larger image: what the zoom ends on.
    const panMiddle = await frame(pan, Math.round(last / 2));
    expect(psnr(panMiddle, await frame(zoomIn, last))).toBeGreaterThan(25);
    expect(psnr(await frame(pan, 0), await frame(pan, last))).toBeLessThan(20);
    // And in between the picture moves on every frame, not in jumps.
    const a = await frame(zoomIn, 10);
    const b = await frame(zoomIn, 11);
    expect(a.equals(b)).toBe(false);
  });
});

describe('Ken Burns motion without judder (issue 38)', () => {
  const grid = path.join(dir, 'grid.png');
  const { width, height } = size;

  beforeAll(async () => {
    // White with black lines 6 px wide every 48 px: each line's centre found to a fraction of a pixel in every frame.
    await runFfmpeg(['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=white:s=900x1400,drawgrid=w=48:h=48:t=6:c=black', '-frames:v', '1', grid]);
  });

  /** Every frame of `file` as grey bytes. */
  async function greyFrames(file: string): Promise<Buffer[]> {
    const { stdout } = await runFfmpeg(['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'], 60_000);
    const bytes = width * height;
    return Array.from({ length: Math.floor(stdout.length / bytes) }, (_, index) => stdout.subarray(index * bytes, (index + 1) * bytes));
  }

  /** The centres of the vertical lines across the middle half of the rows, to a fraction of a pixel (centroids of their ink). */
  function lineCentres(frame: Buffer): number[] {
    const ink = new Float64Array(width);
    for (let y = Math.round(height / 4); y < Math.round((3 * height) / 4); y += 1) {
      for (let x = 0; x < width; x += 1) ink[x] = (ink[x] as number) + 255 - (frame[y * width + x] as number);
    }
    const sorted = [...ink].sort((a, b) => a - b);
    const base = sorted[Math.floor(sorted.length * 0.2)] as number;
    const top = sorted[sorted.length - 1] as number;
    const centres: number[] = [];
    let x = 0;
    while (x < width) {
      if ((ink[x] as number) - base < (top - base) / 2) {
        x += 1;
        continue;
      }
      let end = x;
      while (end < width && (ink[end] as number) - base >= (top - base) / 2) end += 1;
      // Signed ink over a fixed span around the line (its ringing included): the centroid of a line moved by a fraction moves by that fraction.
      const from = Math.round((x + end - 1) / 2) - 12;
      const to = from + 25;
      if (from >= 0 && to <= width) {
        let mass = 0;
        let moment = 0;
        for (let at = from; at < to; at += 1) {
          const weight = (ink[at] as number) - base;
          mass += weight;
          moment += weight * at;
        }
        centres.push(moment / mass);
      }
      x = end;
    }
    return centres;
  }

  /** From each frame to the next: the fit x' = scale·x + shift over the lines seen in both (each matched to its nearest). */
  function steps(frames: Buffer[]): Array<{ scale: number; shift: number }> {
    const centres = frames.map(lineCentres);
    return centres.slice(1).map((after, index) => {
      const pairs = (centres[index] as number[]).flatMap((before) => {
        const nearest = after.reduce((best, at) => (Math.abs(at - before) < Math.abs(best - before) ? at : best), Infinity);
        return Math.abs(nearest - before) < 12 ? [[before, nearest] as const] : [];
      });
      const n = pairs.length;
      const mx = pairs.reduce((sum, [a]) => sum + a, 0) / n;
      const my = pairs.reduce((sum, [, b]) => sum + b, 0) / n;
      const sxy = pairs.reduce((sum, [a, b]) => sum + (a - mx) * (b - my), 0);
      const sxx = pairs.reduce((sum, [a]) => sum + (a - mx) ** 2, 0);
      const scale = sxy / sxx;
      return { scale, shift: my - scale * mx };
    });
  }

  const spread = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = sorted[Math.floor(sorted.length / 2)] as number;
    return Math.max(...values.map((value) => Math.abs(value - middle)));
  };

  it('pans by the same fraction of a pixel in every frame', async () => {
    const { file } = await render('grid-pan', { frameRate: 'constant', background: { type: 'image', file: grid, motion: 'pan' } });
    const moves = steps(await greyFrames(file)).map(({ scale, shift }) => shift + (scale - 1) * (width / 2));
    // Leftwards about 1.2 px a frame (the window crosses 0.2 of the frame's width in 4 s), never a stall or a 2 px step.
    expect(moves.length).toBeGreaterThan(100);
    expect(Math.max(...moves)).toBeLessThan(-0.5);
    expect(spread(moves), moves.map((move) => move.toFixed(2)).join(' ')).toBeLessThan(0.25);
  });

  // Not yet: zoompan crops a whole-pixel window, so a zoom's edges still move every other frame (issue 38 point 8, left
  // open). The ways found that are exact cost more than zoompan's ~4.5 ms a frame at 1080×1920: per-frame crop and
  // scale sizes driven by sendcmd ~7 ms, zoompan over a source prescaled ×4 ~30 ms, perspective 30-40 ms.
  it.skip('zooms by the same factor in every frame: its edges move on in every frame, its middle stays', async () => {
    for (const motion of ['zoom-in', 'zoom-out'] as const) {
      const { file } = await render(`grid-${motion}`, { frameRate: 'constant', background: { type: 'image', file: grid, motion } });
      const fits = steps(await greyFrames(file));
      expect(fits.length).toBeGreaterThan(100);
      // How far the frame's left edge and its middle move from one frame to the next.
      const edges = fits.map(({ shift }) => shift);
      const middles = fits.map(({ scale, shift }) => shift + (scale - 1) * (width / 2));
      expect(Math.min(...edges.map(Math.abs)), motion).toBeGreaterThan(0.1);
      expect(spread(edges), `${motion}: ${edges.map((move) => move.toFixed(2)).join(' ')}`).toBeLessThan(0.25);
      expect(spread(middles), `${motion}: ${middles.map((move) => move.toFixed(2)).join(' ')}`).toBeLessThan(0.25);
    }
  });
});

describe('progress_bar', () => {
  it('grows along the bottom edge with the video, in its colour, over the background', async () => {
    const { file, frames, rendered } = await render('bar', { background: { type: 'color', color: '000000' }, progressBar: { colour: 'FF0000' } });
    expect(rendered.renderPath).toBe('moving');
    const { width, height } = size;
    const redRun = (frame: Buffer, row: number) => {
      let run = 0;
      while (run < width) {
        const offset = (row * width + run) * 3;
        if ((frame[offset] as number) < 200 || (frame[offset + 1] as number) > 60) break;
        run += 1;
      }
      return run;
    };
    for (const share of [0.25, 0.5, 0.9]) {
      const index = Math.round(share * frames) - 1;
      const picture = await decodeFrame(file, index, FPS);
      expect(Math.abs(redRun(picture, height - 2) / width - (index + 1) / frames)).toBeLessThan(0.02);
      // 0.8 % of the height: nothing of it above.
      expect(redRun(picture, height - 14)).toBe(0);
    }
  });
});

describe('progress_bar with a platform (issue 38)', () => {
  it('runs above the band Shorts covers, across its safe width, clear of the captions: never in the bottom 0.8 %', async () => {
    const look = { platform: 'shorts' as const };
    const captions = layoutCaptions({ text: 'One two three four five six seven eight nine ten', speech, size, aspectRatio: '9:16', fps: FPS, look });
    const { file, frames } = await render('bar-shorts', { captions, background: { type: 'color', color: '000000' }, progressBar: { colour: 'FF0000', platform: 'shorts' } });
    const { width, height } = size;
    const red = (frame: Buffer, x: number, y: number) => (frame[(y * width + x) * 3] as number) > 200 && (frame[(y * width + x) * 3 + 1] as number) < 60;
    const index = frames - 2;
    const picture = await decodeFrame(file, index, FPS);
    const rows = Array.from({ length: height }, (_, y) => y).filter((y) => red(picture, Math.round(width * 0.5), y));
    expect(rows.length).toBeGreaterThanOrEqual(8);
    // Above the bottom 22 % Shorts draws over, and not along the bottom edge.
    expect(Math.max(...rows)).toBeLessThan(height * (1 - 0.22));
    expect(rows.every((y) => y < height * 0.9)).toBe(true);
    // Across the safe width only: left of the 13 % of buttons on the right, right of the left margin.
    const row = rows[0] as number;
    const reds = Array.from({ length: width }, (_, x) => x).filter((x) => red(picture, x, row));
    expect(Math.min(...reds)).toBeGreaterThanOrEqual(width * 0.06 - 2);
    expect(Math.max(...reds)).toBeLessThanOrEqual(width * 0.87 + 2);
    // Nearly full this close to the end.
    expect(Math.max(...reds) - Math.min(...reds)).toBeGreaterThan(width * (0.87 - 0.06) * 0.9);
    // The captions' ink (white) stays above the bar.
    const white = Array.from({ length: height }, (_, y) => y).filter((y) => Array.from({ length: width }, (_, x) => x).some((x) => Math.min(picture[(y * width + x) * 3] as number, picture[(y * width + x) * 3 + 1] as number, picture[(y * width + x) * 3 + 2] as number) > 200));
    expect(Math.max(...white)).toBeLessThan(Math.min(...rows));
    await screenshot('captions', 'progress-bar-shorts', file, index);
  });
});

describe('a long moving picture, encoded in two halves at once', () => {
  // 24 s: long enough to be split (at frame 360, a keyframe), short enough for a test.
  const long = toneSpeech(Array.from({ length: 60 }, (_, index) => `word${index}`).join(' '), { wordSeconds: 0.3, gapSeconds: 0.1 });
  const middle = 360;

  it('joins seamlessly: the same captions at the same frames as the still video, the bar and the zoom going on across the join', async () => {
    const still = await render('long-still', { speech: long, frameRate: 'constant', background: { type: 'image', file: image } });
    const barred = await render('long-bar', { speech: long, frameRate: 'constant', background: { type: 'image', file: image }, progressBar: { colour: 'FF0000' } });
    const zoom = await render('long-zoom', { speech: long, frameRate: 'constant', background: moving('zoom-in') });
    expect(barred.rendered.renderPath).toBe('moving');
    expect(barred.pictures).toBe(still.frames);
    expect(zoom.pictures).toBe(still.frames);
    const { width, height } = size;
    const aboveBar = (frame: Buffer) => frame.subarray(0, (height - 16) * width * 3);
    for (const index of [middle - 1, middle, middle + 1, still.frames - 1]) {
      const [a, b] = await Promise.all([decodeFrame(still.file, index, FPS), decodeFrame(barred.file, index, FPS)]);
      expect(psnr(aboveBar(a), aboveBar(b)), `frame ${index}`).toBeGreaterThan(35);
      // The bar's right end at the share of frames shown, on both sides of the join.
      let run = 0;
      const row = (height - 2) * width * 3;
      while (run < width && (b[row + run * 3] as number) > 200 && (b[row + run * 3 + 1] as number) < 60) run += 1;
      expect(Math.abs(run / width - (index + 1) / still.frames), `frame ${index}`).toBeLessThan(0.01);
    }
    // The zoom steps on by as little across the join as from one frame to the next elsewhere.
    const frames = await Promise.all([middle - 2, middle - 1, middle].map((index) => decodeFrame(zoom.file, index, FPS)));
    const step = psnr(frames[0]!, frames[1]!);
    expect(psnr(frames[1]!, frames[2]!)).toBeGreaterThan(step - 3);
    expect(await keyframeTimes(zoom.file)).toEqual(Array.from({ length: Math.ceil(still.frames / 60) }, (_, index) => index * 2));
  });
});

describe('a clip looped under a long video, decoded once', () => {
  const long = toneSpeech(Array.from({ length: 60 }, (_, index) => `word${index}`).join(' '), { wordSeconds: 0.3, gapSeconds: 0.1 });
  const clip = path.join(dir, 'red-blue.mp4');
  // 42 frames: 21 red, then 21 blue. The join of the two halves (frame 360) falls in the middle of a blue run.
  const RED_FRAMES = 21;

  beforeAll(async () => {
    await runFfmpeg([
      '-v', 'error', '-y', '-f', 'lavfi', '-i', `color=c=0xE01010:s=360x640:r=${FPS}:d=0.7`, '-f', 'lavfi', '-i', `color=c=0x1030E0:s=360x640:r=${FPS}:d=0.7`,
      '-filter_complex', '[0:v][1:v]concat=n=2:v=1:a=0[v]', '-map', '[v]', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', clip,
    ]);
  });

  it('shows the frames the clip played over and over would show, on both sides of the join of the halves', async () => {
    const played = await render('clip-played', { speech: long, frameRate: 'constant', background: { type: 'video', file: clip } });
    const once = await render('clip-once', { speech: long, frameRate: 'constant', background: { type: 'video', file: clip, seconds: 1.4 } });
    expect(once.rendered.renderPath).toBe('moving');
    expect(once.pictures).toBe(played.frames);
    const isRed = (frame: Buffer) => (frame[0] as number) > 180 && (frame[2] as number) < 80;
    // The last and first frame of each colour run around the join, and the join itself.
    for (const index of [335, 336, 356, 357, 359, 360, 377, 378, 398, 399, once.frames - 1]) {
      const [a, b] = await Promise.all([decodeFrame(played.file, index, FPS), decodeFrame(once.file, index, FPS)]);
      const red = index % (2 * RED_FRAMES) < RED_FRAMES;
      expect(isRed(a), `frame ${index}, decoded as it played`).toBe(red);
      expect(isRed(b), `frame ${index}, decoded once`).toBe(red);
      expect(psnr(a, b), `frame ${index}`).toBeGreaterThan(35);
    }
  });
});

describe('through POST /tts-video', () => {
  const t = useTestApp();

  it('takes background.motion and progress_bar, says renderPath moving and frameRate constant, and refuses an unknown motion', async () => {
    const id = await uploadAsset(t.app, image);
    const body = { text: 'A slow zoom with a bar.', voice: 'espeak-ng:en-us', resolution: '720p', aspect_ratio: '9:16', frame_rate: 'variable' };
    const made = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { ...body, background: { image: id, motion: 'zoom-in' }, progress_bar: true } });
    expect(made.statusCode, made.body).toBe(200);
    expect(made.json<TtsVideoResponse>()).toMatchObject({ renderPath: 'moving', frameRate: 'constant' });
    const plain = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { ...body, background: { image: id } } });
    expect(plain.json<TtsVideoResponse>()).toMatchObject({ renderPath: 'spliced', frameRate: 'variable' });
    const refused = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { ...body, background: { image: id, motion: 'spin' } } });
    expect(refused.statusCode).toBe(400);
  });
});
