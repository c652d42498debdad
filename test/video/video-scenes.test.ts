// Issue 24: scenes. Backgrounds in turn from a time or a sentence on, cut (still scenes stay on the splicer, each
// still encoded once) or cross-faded (the moving path); frames decoded and their pixels checked at every change.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TtsVideoResponse } from '../../src/api/video.js';
import { AppError } from '../../src/errors.js';
import type { Background } from '../../src/video/background.js';
import { frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import type { FrameRate } from '../../src/api/video-options.js';
import { renderVideo, type RenderedVideo, type RenderOptions } from '../../src/video/render.js';
import { crossfadeFrames, placeScenes, sceneTimeline, type Scene } from '../../src/video/scenes.js';
import { decodeErrors, decodeFrame, ffmpeg, frameHashes, keyframeTimes, probe, runFfmpeg, screenshot } from '../helpers/media.js';
import { uploadAsset, useTestApp } from '../helpers/helpers.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { toneSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const TEXT = 'Scenes change behind the words as the story goes on and on';
const speech = toneSpeech(TEXT, { wordSeconds: 0.3, gapSeconds: 0.1 });
const size = frameSize('720p', '9:16');
const captions = layoutCaptions({ text: TEXT, speech, size, aspectRatio: '9:16', fps: FPS });
const dir = useTempDir('voxreel-scenes-');
const image = path.join(dir, 'green.png');

const colour = (color: string): Background => ({ type: 'color', color });
/** Red from 0 (the video's own background), then a gradient, an image (a flat green), and blue. */
const SCENES: Scene[] = [
  { background: { type: 'gradient', colors: ['000000', 'FFFFFF'], direction: 'vertical' }, startFrame: 20 },
  { background: { type: 'image', file: image }, startFrame: 41 },
  { background: colour('1030E0'), startFrame: 77 },
];

beforeAll(async () => {
  await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'color=c=0x20A040:s=300x500', '-frames:v', '1', image]);
});

async function render(name: string, options: Partial<RenderOptions>): Promise<{ file: string; rendered: RenderedVideo }> {
  const file = path.join(dir, `${name}.mp4`);
  const rendered = await renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate: 'constant', captions, output: file, background: colour('E01010'), ...options });
  expect(await decodeErrors(file)).toBe('');
  return { file, rendered };
}

/** The pixel at the top left corner, well away from the captions. */
async function corner(file: string, frame: number): Promise<number[]> {
  const picture = await decodeFrame(file, frame, FPS);
  const offset = (8 * size.width + 8) * 3;
  return [picture[offset] as number, picture[offset + 1] as number, picture[offset + 2] as number];
}

function expectNear(actual: number[], expected: number[], tolerance = 8): void {
  actual.forEach((value, index) => expect(Math.abs(value - (expected[index] as number)), `${actual} vs ${expected}`).toBeLessThanOrEqual(tolerance));
}

const RED = [224, 16, 16];
const BLACK = [0, 0, 0];
const GREEN = [32, 160, 64];
const BLUE = [16, 48, 224];

describe('placing scenes', () => {
  const sentences = [
    { start: 0.05, end: 1.2, textOffset: 0, textLength: 10 },
    { start: 1.5, end: 2.9, textOffset: 11, textLength: 10 },
  ];
  const red = colour('FF0000');

  it('starts a scene on the first frame at or after its time, or as its sentence starts, and leaves out one past the end', () => {
    const placed = placeScenes([{ background: red, start: 0 }, { background: red, sentence: 1 }, { background: red, start: 2.0 }, { background: red, start: 99 }], sentences, FPS, 90);
    expect(placed.map((scene) => scene.startFrame)).toEqual([0, 45, 60]);
    expect(placeScenes([{ background: red, start: 1 / 30 + 0.0001 }], sentences, FPS, 90)[0]?.startFrame).toBe(2);
  });

  it('starts a scene at sentence 0 on frame 0, whatever silence the voice starts with (issue 38)', () => {
    expect(placeScenes([{ background: red, sentence: 0 }, { background: red, sentence: 1 }], sentences, FPS, 90).map((scene) => scene.startFrame)).toEqual([0, 45]);
  });

  it('refuses a sentence past the last one and starts that do not rise, naming the scene', () => {
    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return error instanceof AppError ? { code: error.code, field: error.field } : error;
      }
      return undefined;
    };
    expect(refusal(() => placeScenes([{ background: red, sentence: 2 }], sentences, FPS, 90))).toEqual({ code: 'INVALID_SCENES', field: 'scenes[0].sentence' });
    expect(refusal(() => placeScenes([{ background: red, start: 2 }, { background: red, sentence: 1 }], sentences, FPS, 90))).toEqual({ code: 'INVALID_SCENES', field: 'scenes[1]' });
  });

  it('shows the video\'s own background before a first scene that starts later, and fades over 0.3 s or a shorter scene', () => {
    const timeline = sceneTimeline(red, [{ background: red, startFrame: 30 }, { background: red, startFrame: 34 }]);
    expect(timeline.map((scene) => scene.startFrame)).toEqual([0, 30, 34]);
    expect(crossfadeFrames(timeline, 90, FPS)).toEqual([4, 9]);
    expect(sceneTimeline(red, [{ background: red, startFrame: 0 }])).toHaveLength(1);
  });
});

describe('scenes in the picture', () => {
  for (const frameRate of ['constant', 'variable'] as const satisfies FrameRate[]) {
    it(`${frameRate} rate: cuts show each scene's background exactly in its span, spliced, each scene starting on a keyframe`, async () => {
      const spliced = await render(`cuts-${frameRate}`, { frameRate, scenes: SCENES });
      expect(spliced.rendered.renderPath).toBe('spliced');
      const { file } = spliced;
      const last = captions.frames - 1;
      expectNear(await corner(file, 0), RED);
      expectNear(await corner(file, 19), RED);
      expectNear(await corner(file, 20), BLACK);
      expectNear(await corner(file, 40), BLACK);
      expectNear(await corner(file, 41), GREEN);
      expectNear(await corner(file, 76), GREEN);
      expectNear(await corner(file, 77), BLUE);
      expectNear(await corner(file, last), BLUE);
      // The whole video, as long as the narration, and the same pictures as the plain render (the splicer's fallback).
      const video = (await probe(file)).streams.find((stream) => stream.codecType === 'video');
      expect(Math.round((video?.duration ?? 0) * FPS)).toBe(captions.frames);
      const plain = await render(`cuts-${frameRate}-plain`, { frameRate, scenes: SCENES, splice: false });
      expect(plain.rendered.renderPath).toBe('plain');
      for (const frame of [19, 20, 41, 77]) expectNear(await corner(plain.file, frame), await corner(file, frame), 3);
      // One frame of each scene (a constant-rate file's pictures are its frames).
      if (frameRate === 'constant') for (const frame of [10, 30, 60, 100]) await screenshot('creator', `scenes-frame-${frame}`, file, frame);
      // A keyframe (IDR picture) at every scene start (each still is encoded once there), then every 2 s of the scene.
      const keyframes = (await keyframeTimes(file)).map((time) => Math.round(time * FPS));
      expect(keyframes).toEqual([0, 20, 41, 77, 137].filter((frame) => frame < captions.frames));
    });
  }

  it('a title splits its scene: the band reaches up to the title only while it shows, with a keyframe where it goes; the pictures are the plain render\'s', async () => {
    const titled = layoutCaptions({ text: TEXT, speech, size, aspectRatio: '9:16', fps: FPS, title: { text: 'A title for a while', seconds: 1.5 } });
    const options = { captions: titled, background: { type: 'gradient', colors: ['1E3A8A', 'DB2777'], direction: 'vertical' } as const, scenes: [{ background: colour('1030E0'), startFrame: 100 }] };
    const spliced = await render('titled', options);
    const plain = await render('titled-plain', { ...options, splice: false });
    expect(spliced.rendered.renderPath).toBe('spliced');
    expect((await keyframeTimes(spliced.file)).map((time) => Math.round(time * FPS))).toEqual([0, 45, 100]);
    for (const frame of [20, 44, 45, 46, 99, 100, captions.frames - 1]) {
      const [a, b] = await Promise.all([decodeFrame(spliced.file, frame, FPS), decodeFrame(plain.file, frame, FPS)]);
      let squares = 0;
      for (let index = 0; index < a.length; index += 1) squares += ((a[index] as number) - (b[index] as number)) ** 2;
      expect(10 * Math.log10((255 * 255) / Math.max(1e-9, squares / a.length)), `frame ${frame}`).toBeGreaterThan(35);
    }
  });

  it('a cross-fade blends the two scenes over 0.3 s from the start of the next, then shows it alone (renderPath moving)', async () => {
    const { file, rendered } = await render('crossfade', { scenes: [{ background: colour('1030E0'), startFrame: 30 }], transition: 'crossfade' });
    expect(rendered).toMatchObject({ renderPath: 'moving', frameRate: 'constant' });
    expectNear(await corner(file, 29), RED);
    const middle = await corner(file, 34);
    // Halfway through the 9 frames, about half of each.
    expectNear(middle, [120, 32, 120], 30);
    expectNear(await corner(file, 39), BLUE);
    expectNear(await corner(file, captions.frames - 1), BLUE);
    const hashes = await frameHashes(file);
    expect(hashes).toHaveLength(captions.frames);
  });
});

describe('scenes through POST /tts-video', () => {
  const t = useTestApp();

  it('takes colours, gradients and image assets from times and sentences, and refuses scenes that cannot be shown', async () => {
    const id = await uploadAsset(t.app, image);
    const body = { text: 'The first sentence is here. The second one follows it.', voice: 'espeak-ng:en-us', resolution: '720p', aspect_ratio: '9:16' };
    const scenes = [{ background: '#E01010', start: 0 }, { background: { image: id }, sentence: 1 }];
    const made = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { ...body, scenes } });
    expect(made.statusCode, made.body).toBe(200);
    const video = made.json<TtsVideoResponse>();
    expect(video.renderPath).toBe('spliced');
    const file = path.join(t.outputDir, 'video', path.basename(video.url));
    expectNear(await corner(file, 3), RED);
    expectNear(await corner(file, Math.round(video.duration * FPS) - 2), GREEN);

    const refuse = async (payload: object, status: number, code: string, field?: string) => {
      const response = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { ...body, ...payload } });
      expect(response.statusCode, response.body).toBe(status);
      expect(response.json()).toMatchObject({ error: { code, ...(field ? { field } : {}) } });
    };
    // A scene at sentence 0 is the first frame, the cover most platforms show (issue 38: eSpeak's leading silence left
    // the fallback background on frames 0-1).
    const first = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { ...body, background: '#1030E0', scenes: [{ background: '#E01010', sentence: 0 }, { background: { image: id }, sentence: 1 }] } });
    expect(first.statusCode, first.body).toBe(200);
    const firstFile = path.join(t.outputDir, 'video', path.basename(first.json<TtsVideoResponse>().url));
    expectNear(await corner(firstFile, 0), RED);
    expectNear(await corner(firstFile, 1), RED);

    await refuse({ scenes: [{ background: '#E01010', sentence: 5 }] }, 422, 'INVALID_SCENES', 'scenes[0].sentence');
    await refuse({ scenes: [{ background: '#E01010', start: 2 }, { background: '#1030E0', start: 1 }] }, 422, 'INVALID_SCENES', 'scenes[1]');
    await refuse({ scenes: [{ background: { image: 'nope' }, start: 0 }] }, 422, 'UNKNOWN_ASSET', 'scenes[0].background.image');
    await refuse({ scenes: [{ background: '#E01010' }] }, 400, 'VALIDATION_ERROR');
    await refuse({ scenes: [{ background: '#E01010', start: 0, sentence: 1 }] }, 400, 'VALIDATION_ERROR');
    await refuse({ transition: 'wipe', scenes }, 400, 'VALIDATION_ERROR');
  });
});
