import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { composeStream, H264Error, splitNalUnits, type Splice } from '../../src/video/h264/index.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { captionDrawing } from '../../src/video/caption-drawing.js';
import { pictureFrames } from '../../src/video/h264/index.js';
import type { FrameRate } from '../../src/api/video-options.js';
import { KEYFRAME_SECONDS, renderVideo, type RenderPath } from '../../src/video/render.js';
import { ffmpeg, rawStreams, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { captionPixels, toneSpeech, type Box } from '../helpers/video-helpers.js';

const TEXT = 'When the splicer gives up, the plain way draws the very same captions at the very same frames.';
const FPS = 30;
const speech = toneSpeech(TEXT);
// Small, to decode many frames at once; 360 rows crop the last macroblock row as 1080 do.
const size = { width: 640, height: 360 };
const captions = layoutCaptions({ text: TEXT, speech, size, aspectRatio: '16:9', fps: FPS });
const work = useTempDir('voxreel-fallback-');

/** A splicer that refuses every stream, as it does x264 output it cannot splice. */
const refusing: Splice = () => {
  throw new H264Error('refused on purpose');
};

/** A splicer whose stream stops after about half its pictures: it parses, but the video would be too short. */
const cutShort: Splice = (parts) => {
  const composed = composeStream(parts);
  const nals = splitNalUnits(composed.stream);
  const cut = (nals[Math.floor(nals.length / 2)] as Uint8Array).byteOffset - composed.stream.byteOffset - 4;
  return { ...composed, stream: composed.stream.subarray(0, cut) };
};

async function render(name: string, frameRate: FrameRate, splice?: Splice | false): Promise<{ file: string; warnings: unknown[]; renderPath: RenderPath }> {
  const file = path.join(work, `${name}-${frameRate}.mp4`);
  const warnings: unknown[] = [];
  const { renderPath } = await renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate, captions, output: file, timeoutMs: 60_000, splice, onWarning: (_message, cause) => warnings.push(cause) });
  return { file, warnings, renderPath };
}

/** Frames worth looking at: before the first word, and the first and last of every caption state. */
const probeFrames = [0, ...captions.states.flatMap((state) => [state.startFrame, state.endFrame - 1])];

/** The probe frames as RGB24, decoded at the constant FPS in one run. */
async function probe(file: string): Promise<Buffer[]> {
  const select = `select='${probeFrames.map((frame) => `eq(n,${frame})`).join('+')}'`;
  const { stdout } = await runFfmpeg(['-v', 'error', '-i', file, '-vf', `fps=${FPS},${select}`, '-fps_mode', 'passthrough', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
  const frameBytes = size.width * size.height * 3;
  expect(stdout.length).toBe(probeFrames.length * frameBytes);
  return probeFrames.map((_, index) => stdout.subarray(index * frameBytes, (index + 1) * frameBytes));
}

/** Mean absolute difference of two RGB24 frames, per sample (0-255). */
function meanDifference(a: Buffer, b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < a.length; i += 1) sum += Math.abs((a[i] as number) - (b[i] as number));
  return sum / a.length;
}

/** The lit word's pixels (the yellow highlight) made white, all else black, so captionPixels finds the lit word. */
function litOnly(frame: Buffer): Buffer {
  const lit = Buffer.alloc(frame.length);
  for (let i = 0; i + 2 < frame.length; i += 3) {
    if ((frame[i] as number) > 200 && (frame[i + 1] as number) > 150 && (frame[i + 2] as number) < 120) lit.fill(255, i, i + 3);
  }
  return lit;
}

/** Where the captions, and the lit word among them, are drawn. */
function drawn(frame: Buffer): { text: Box | undefined; lit: Box | undefined; count: number; litCount: number } {
  const text = captionPixels(frame, size.width);
  const lit = captionPixels(litOnly(frame), size.width);
  return { text: text.box, lit: lit.box, count: text.count, litCount: lit.count };
}

function expectNear(actual: Box | undefined, expected: Box | undefined, label: string): void {
  for (const side of ['left', 'top', 'right', 'bottom'] as const) expect(Math.abs((actual?.[side] ?? -99) - (expected?.[side] ?? -99)), `${label}, ${side}`).toBeLessThanOrEqual(2);
}

/** What we promise of every video: H.264 yuv420p at the size, square pixels, narration-long, AAC, moov first. */
async function expectDeliverable(file: string, frameRate: FrameRate): Promise<void> {
  const [video, audio] = await rawStreams(file);
  expect(video).toMatchObject({ codec_name: 'h264', pix_fmt: 'yuv420p', width: size.width, height: size.height });
  expect(video?.sample_aspect_ratio ?? '1:1').toBe('1:1');
  expect(Number(video?.nb_frames)).toBe(frameRate === 'constant' ? captions.frames : pictureFrames(captionDrawing(captions), KEYFRAME_SECONDS * 30).length);
  if (frameRate === 'constant') expect(video).toMatchObject({ r_frame_rate: '30/1', avg_frame_rate: '30/1' });
  expect(audio).toMatchObject({ codec_type: 'audio', codec_name: 'aac' });
  expect(Math.abs(Number(video?.duration) - speech.duration)).toBeLessThan(0.05);
  expect(Math.abs(Number(audio?.duration) - speech.duration)).toBeLessThan(0.05);
  const bytes = await readFile(file);
  expect(bytes.indexOf('moov')).toBeLessThan(bytes.indexOf('mdat'));
}

describe('renderVideo falls back to the plain way when the splicer fails', () => {
  for (const frameRate of ['constant', 'variable'] as const) {
    it(`${frameRate} rate: a refused splice, and a spliced video that fails its check, both give the same captions as the splicer`, async () => {
      const spliced = await render('spliced', frameRate);
      expect(spliced.warnings).toEqual([]);
      expect(spliced.renderPath).toBe('spliced');
      const reference = await probe(spliced.file);
      const shown = reference.map(drawn);
      expect(shown[0]?.count).toBe(0);
      for (const state of shown.slice(1)) {
        expect(state.count).toBeGreaterThan(200);
        expect(state.litCount).toBeGreaterThan(50);
      }

      for (const [name, splice] of [
        ['refused', refusing],
        ['cut-short', cutShort],
      ] as const) {
        const plain = await render(name, frameRate, splice);
        expect(plain.warnings, name).toHaveLength(1);
        expect(plain.warnings[0], name).toBeInstanceOf(H264Error);
        // The response says which path the video took.
        expect(plain.renderPath, name).toBe('plain');
        await expectDeliverable(plain.file, frameRate);
        const frames = await probe(plain.file);
        frames.forEach((frame, index) => {
          const label = `${name}, frame ${probeFrames[index]}`;
          // The same picture, up to the two encoders' losses (about 0.15), with the same word lit in the same place.
          expect(meanDifference(frame, reference[index] as Buffer), label).toBeLessThan(0.5);
          expectNear(drawn(frame).text, shown[index]?.text, `${label}: captions`);
          expectNear(drawn(frame).lit, shown[index]?.lit, `${label}: lit word`);
        });
      }
    });
  }

  it('renders the plain way straight away, without a warning, when told the splicer is broken', async () => {
    const plain = await render('told', 'variable', false);
    expect(plain.warnings).toEqual([]);
    expect(plain.renderPath).toBe('plain');
    await expectDeliverable(plain.file, 'variable');
    expect((await probe(plain.file)).slice(1).every((frame) => drawn(frame).litCount > 50)).toBe(true);
  });
});
