import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AspectRatio, VideoResolution } from '../../src/api/video.js';
import type { Captions } from '../../src/video/captions.js';
import { frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { captionDrawing } from '../../src/video/caption-drawing.js';
import { pictureFrames } from '../../src/video/h264/index.js';
import { KEYFRAME_SECONDS, renderVideo } from '../../src/video/render.js';
import type { FrameRate } from '../../src/api/video.js';
import { decodeFrame, ffmpeg, frameHashes, meanVolume, probe, rawStreams } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { captionPixels, toneSpeech } from '../helpers/video-helpers.js';

const TEXT = 'Captions follow the voice word by word, and stay inside the safe area of every frame size.';
const FPS = 30;
const speech = toneSpeech(TEXT);

const work = useTempDir('voxreel-render-');

async function render(
  resolution: VideoResolution,
  aspectRatio: AspectRatio,
  options: { frameRate?: FrameRate; subtitles?: boolean; tag?: string; splice?: false } = {},
): Promise<{ file: string; captions: Captions }> {
  const size = frameSize(resolution, aspectRatio);
  const captions = layoutCaptions({ text: TEXT, speech, size, aspectRatio, fps: FPS });
  const way = options.splice === false ? '-plain' : '';
  const file = path.join(work, `${resolution}-${aspectRatio.replace(':', 'x')}-${options.frameRate ?? 'constant'}-${options.subtitles ?? true}${options.tag ?? ''}${way}.mp4`);
  await renderVideo(ffmpeg, {
    splice: options.splice,
    speech,
    size,
    fps: FPS,
    frameRate: options.frameRate ?? 'constant',
    captions: options.subtitles === false ? undefined : captions,
    output: file,
    timeoutMs: 60_000,
  });
  return { file, captions };
}

/** MD5 of every frame, decoded at the constant FPS. */
function hashesAtFps(file: string): Promise<string[]> {
  return frameHashes(file, { filter: `fps=${FPS}` });
}

/** A frame in the middle of the first caption state of cue `cue`. */
function frameInCue(captions: Captions, cue: number): number {
  const state = captions.states.find((candidate) => candidate.cue === cue);
  if (!state) throw new Error(`cue ${cue} has no state`);
  return Math.floor((state.startFrame + state.endFrame) / 2);
}

describe('renderVideo at every size', () => {
  // The splicer's path for every size, and the plain path for 4:5 (576 is a whole number of macroblocks, 1350 is not).
  const sizes: Array<[VideoResolution, AspectRatio, ('plain' | undefined)?]> = [
    ['1080p', '16:9'],
    ['1080p', '9:16'],
    ['1080p', '1:1'],
    ['1080p', '4:5'],
    ['720p', '16:9'],
    ['720p', '9:16'],
    ['720p', '1:1'],
    ['720p', '4:5'],
    ['720p', '4:5', 'plain'],
    ['1080p', '4:5', 'plain'],
  ];
  for (const [resolution, aspectRatio, way] of sizes) {
    it(`${resolution} ${aspectRatio}${way ? ` (${way})` : ''}: H.264 + AAC at the exact size, narration-long, audible, captions in the safe area`, async () => {
      const { width, height } = frameSize(resolution, aspectRatio);
      const { file, captions } = await render(resolution, aspectRatio, way === 'plain' ? { splice: false } : {});
      const info = await probe(file);
      expect(info.formatName).toContain('mp4');
      const [video, audio] = await rawStreams(file);
      expect(video).toMatchObject({ codec_type: 'video', codec_name: 'h264', pix_fmt: 'yuv420p', width, height, r_frame_rate: '30/1', avg_frame_rate: '30/1' });
      expect(video?.sample_aspect_ratio ?? '1:1').toBe('1:1');
      expect(Number(video?.nb_frames)).toBe(captions.frames);
      expect(audio).toMatchObject({ codec_type: 'audio', codec_name: 'aac' });
      expect(Math.abs(Number(video?.duration) - speech.duration)).toBeLessThan(0.05);
      expect(Math.abs(Number(audio?.duration) - speech.duration)).toBeLessThan(0.05);
      expect(await meanVolume(file)).toBeGreaterThan(-40);

      const bytes = await readFile(file);
      expect(bytes.indexOf('moov')).toBeLessThan(bytes.indexOf('mdat'));

      for (const cue of [0, captions.cues.length - 1]) {
        const { count, box } = captionPixels(await decodeFrame(file, frameInCue(captions, cue), FPS), width);
        expect(count).toBeGreaterThan(200);
        expect(box!.left).toBeGreaterThanOrEqual(captions.box.marginLeft - captions.box.outline - 2);
        expect(box!.right).toBeLessThanOrEqual(width - captions.box.marginRight + captions.box.outline + 2);
        if (aspectRatio === '9:16') expect(box!.right).toBeLessThanOrEqual(width * 0.85);
        expect(box!.bottom).toBeLessThanOrEqual(height - captions.box.marginBottom + captions.box.outline + 2);
        if (aspectRatio === '9:16') expect(box!.bottom).toBeLessThan(height * 0.8);
        // Instagram's feed: above its bottom buttons, inside the profile grid's 3:4 crop.
        if (aspectRatio === '4:5') expect(box!.bottom).toBeLessThan(height * 0.88);
        if (aspectRatio === '4:5') expect(Math.min(box!.left, width - box!.right)).toBeGreaterThan(width * 0.04);
      }
      // Before the first word, nothing is drawn.
      expect(captionPixels(await decodeFrame(file, 0, FPS), width).count).toBe(0);
    });
  }
});

describe('renderVideo options', () => {
  it('draws no caption pixels with subtitles off', async () => {
    const { file, captions } = await render('720p', '9:16', { subtitles: false });
    for (const cue of captions.cues.keys()) {
      expect(captionPixels(await decodeFrame(file, frameInCue(captions, cue), FPS), 720).count).toBe(0);
    }
    const [video] = await rawStreams(file);
    expect(Number(video?.nb_frames)).toBe(captions.frames);
  });

  it('draws the same captions on a machine without fonts: the font ships with the project', async () => {
    const normal = await render('720p', '1:1');
    // fontconfig with no font directory at all: libass finds only the fonts we hand it.
    const config = path.join(work, 'no-fonts.conf');
    await writeFile(config, `<?xml version="1.0"?>\n<fontconfig><cachedir>${path.join(work, 'fc-cache')}</cachedir></fontconfig>\n`);
    process.env.FONTCONFIG_FILE = config;
    try {
      const isolated = await render('720p', '1:1', { tag: '-no-fonts' });
      expect(captionPixels(await decodeFrame(isolated.file, frameInCue(isolated.captions, 0), FPS), 720).count).toBeGreaterThan(200);
      expect(await hashesAtFps(isolated.file)).toEqual(await hashesAtFps(normal.file));
    } finally {
      delete process.env.FONTCONFIG_FILE;
    }
  });

  it('lights the highlighted word within a frame of its start', async () => {
    const { file, captions } = await render('720p', '16:9');
    const state = captions.states[3]!;
    const yellowish = (frame: Buffer) => {
      let count = 0;
      for (let i = 0; i + 2 < frame.length; i += 3) if ((frame[i] as number) > 200 && (frame[i + 1] as number) > 150 && (frame[i + 2] as number) < 120) count += 1;
      return count;
    };
    const before = await decodeFrame(file, state.startFrame - 1, FPS);
    const at = await decodeFrame(file, state.startFrame, FPS);
    expect(state.startFrame).toBe(captions.wordFrames[state.word]);
    expect(Math.abs(state.startFrame / FPS - speech.words[state.word]!.start)).toBeLessThan(1 / FPS);
    expect(at.equals(before)).toBe(false);
    expect(yellowish(at)).toBeGreaterThan(50);
  });

  it('variable rate: one frame per caption change, the same frames as the constant rate once decoded at it', async () => {
    const constant = await render('1080p', '9:16');
    const variable = await render('1080p', '9:16', { frameRate: 'variable' });
    const [video, audio] = await rawStreams(variable.file);
    expect(video).toMatchObject({ codec_name: 'h264', pix_fmt: 'yuv420p', width: 1080, height: 1920 });
    // One picture per caption change, plus an IDR picture every KEYFRAME_SECONDS.
    expect(Number(video?.nb_frames)).toBe(pictureFrames(captionDrawing(variable.captions), KEYFRAME_SECONDS * FPS).length);
    expect(Math.abs(Number(video?.duration) - speech.duration)).toBeLessThan(0.05);
    expect(Math.abs(Number(audio?.duration) - speech.duration)).toBeLessThan(0.05);
    const [a, b] = await Promise.all([hashesAtFps(constant.file), hashesAtFps(variable.file)]);
    expect(a).toHaveLength(constant.captions.frames);
    expect(b).toEqual(a);
  });
});
