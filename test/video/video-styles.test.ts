import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assScript } from '../../src/video/ass.js';
import type { Background } from '../../src/video/background.js';
import { CAPTION_POSITIONS, CAPTION_STYLES, STYLE_PRESETS, type CaptionLook } from '../../src/video/caption-style.js';
import type { Captions } from '../../src/video/captions.js';
import { frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import type { AspectRatio } from '../../src/api/video-options.js';
import { renderVideo } from '../../src/video/render.js';
import { multipartForm, useTestApp } from '../helpers/helpers.js';
import { decodeErrors, decodeFrame, ffmpeg, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { captionPixels, toneSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const TEXT = 'Every style draws these words where people expect them, in the colours they asked for';
const speech = toneSpeech(TEXT, { wordSeconds: 0.35, gapSeconds: 0.1 });

const dir = useTempDir('voxreel-styles-');

async function render(name: string, aspectRatio: AspectRatio, look: Partial<CaptionLook>, background?: Background): Promise<{ file: string; captions: Captions }> {
  const size = frameSize('720p', aspectRatio);
  const captions = layoutCaptions({ text: TEXT, speech, size, aspectRatio, fps: FPS, look });
  const file = path.join(dir, `${name}.mp4`);
  await renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate: 'constant', captions, output: file, background });
  expect(await decodeErrors(file)).toBe('');
  return { file, captions };
}

/** Pixels of an RGB24 frame close to a colour. */
function pixelsNear(frame: Buffer, hex: string, tolerance = 40): number {
  const [r, g, b] = [0, 2, 4].map((at) => parseInt(hex.slice(at, at + 2), 16)) as [number, number, number];
  let count = 0;
  for (let i = 0; i + 2 < frame.length; i += 3) {
    if (Math.abs((frame[i] as number) - r) + Math.abs((frame[i + 1] as number) - g) + Math.abs((frame[i + 2] as number) - b) < tolerance) count += 1;
  }
  return count;
}

/** A frame where a word in the middle of a cue is lit (or, for styles that light none, the cue is up). */
function litFrame(captions: Captions): number {
  const state = captions.states[Math.floor(captions.states.length / 2)]!;
  return state.startFrame;
}

describe('caption styles', () => {
  for (const style of CAPTION_STYLES) {
    for (const aspectRatio of ['16:9', '9:16', '1:1'] as const) {
      it(`${style}, ${aspectRatio}: drawn where the style puts it, inside the safe area`, async () => {
        const { file, captions } = await render(`${style}-${aspectRatio}`, aspectRatio, { style });
        const { width, height } = captions.box;
        const { count, box } = captionPixels(await decodeFrame(file, litFrame(captions), FPS), width);
        expect(count).toBeGreaterThan(150);
        const middle = (box!.top + box!.bottom) / 2;
        if (STYLE_PRESETS[style].position === 'middle') expect(Math.abs(middle - height / 2)).toBeLessThan(height * 0.12);
        else expect(box!.bottom).toBeGreaterThan(height * (aspectRatio === '9:16' ? 0.55 : 0.7));
        if (aspectRatio === '9:16') {
          expect(box!.right).toBeLessThanOrEqual(width * 0.85);
          expect(box!.bottom).toBeLessThan(height * 0.75);
        }
      });
    }
  }

  it('bold shows one to three words at a time on one line, the lit word larger', async () => {
    const { captions } = await render('bold-words', '9:16', { style: 'bold' });
    for (const cue of captions.cues) {
      expect(cue.lines).toHaveLength(1);
      expect(new Set(cue.lines.flat().map((piece) => piece.word)).size).toBeLessThanOrEqual(3);
    }
    expect(assScript(captions)).toContain('\\fscx112\\fscy112');
    const karaoke = layoutCaptions({ text: TEXT, speech, size: frameSize('720p', '9:16'), aspectRatio: '9:16', fps: FPS });
    expect(captions.box.fontSize).toBeGreaterThan(karaoke.box.fontSize * 1.4);
  });

  it('subtitle lights no word and draws a translucent box behind its lines', async () => {
    const { file, captions } = await render('subtitle-box', '16:9', { style: 'subtitle' }, { type: 'color', color: 'FFFFFF' });
    expect(new Set(captions.states.map((state) => state.cue)).size).toBe(captions.states.length);
    const frame = await decodeFrame(file, litFrame(captions), FPS);
    // Black at about 62 % over white: grey near 97.
    expect(pixelsNear(frame, '616161', 30)).toBeGreaterThan(2000);
    expect(pixelsNear(frame, 'FFD23F')).toBe(0);
  });

  it('caption and highlight colours are the ones asked for', async () => {
    const { file, captions } = await render('colours', '16:9', { textColour: 'FF3B30', highlightColour: '34C759' });
    const frame = await decodeFrame(file, litFrame(captions), FPS);
    expect(pixelsNear(frame, 'FF3B30')).toBeGreaterThan(300);
    expect(pixelsNear(frame, '34C759')).toBeGreaterThan(50);
    expect(pixelsNear(frame, 'FFFFFF')).toBeLessThan(50);
  });

  for (const position of CAPTION_POSITIONS) {
    it(`position ${position} moves the captions there`, async () => {
      const { file, captions } = await render(`position-${position}`, '9:16', { position });
      const { box } = captionPixels(await decodeFrame(file, litFrame(captions), FPS), captions.box.width);
      const middle = (box!.top + box!.bottom) / 2 / captions.box.height;
      expect(middle).toBeGreaterThan({ top: 0.1, middle: 0.35, bottom: 0.6 }[position]);
      expect(middle).toBeLessThan({ top: 0.3, middle: 0.65, bottom: 0.75 }[position]);
    });
  }

  it('font_size scales the captions', async () => {
    const small = layoutCaptions({ text: TEXT, speech, size: frameSize('720p', '16:9'), aspectRatio: '16:9', fps: FPS, look: { scale: 0.5 } });
    const large = layoutCaptions({ text: TEXT, speech, size: frameSize('720p', '16:9'), aspectRatio: '16:9', fps: FPS, look: { scale: 2 } });
    expect(large.box.fontSize).toBeCloseTo(small.box.fontSize * 4, -1);
    expect(large.cues.length).toBeGreaterThan(small.cues.length);
  });
});

describe('POST /tts-video look options', () => {
  const t = useTestApp();
  const post = (body: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/tts-video', payload: { text: 'Styled over HTTP.', voice: 'espeak-ng:en-us', resolution: '720p', ...body } });

  it('accepts every option together and makes the video', async () => {
    const response = await post({
      caption_style: 'bold',
      font: 'display',
      caption_color: '#ffffff',
      highlight_color: '#34C759',
      position: 'top',
      font_size: 1.2,
      background: { gradient: ['#1E3A8A', '#DB2777'], direction: 'diagonal' },
    });
    expect(response.statusCode, response.body).toBe(200);
  });

  it.each([
    ['caption_style', 'comic'],
    ['caption_color', 'red'],
    ['highlight_color', '#12345'],
    ['font', 'comic-sans'],
    ['position', 'left'],
    ['font_size', 3],
    ['background', { gradient: ['#000000'] }],
    ['background', { image: 'x', color: '#000000' }],
  ])('%s %j → 400 VALIDATION_ERROR', async (field, value) => {
    const response = await post({ [field]: value });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toMatchObject({ status: 'error', error: { code: 'VALIDATION_ERROR' } });
  });

  it('an uploaded image as the background', async () => {
    const image = path.join(dir, 'upload.png');
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'color=c=0x2E7D32:s=320x240', '-frames:v', '1', image]);
    const uploaded = await t.app.inject({ method: 'POST', url: '/assets', ...multipartForm([{ name: 'file', filename: 'bg.png', type: 'image/png', content: await readFile(image) }]) });
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const response = await post({ background: { image: uploaded.json<{ id: string }>().id }, subtitles: false });
    expect(response.statusCode, response.body).toBe(200);
    const video = await t.fetchFile(response.json<{ url: string }>().url);
    const file = path.join(dir, 'with-image.mp4');
    await writeFile(file, video.body);
    const frame = await decodeFrame(file, 5, 30);
    const offset = (300 * 720 + 300) * 3;
    for (const [index, channel] of [0x2e, 0x7d, 0x32].entries()) expect(Math.abs((frame[offset + index] as number) - channel)).toBeLessThanOrEqual(4);
  });

  it('an unknown image asset → 422 naming background.image, before any work', async () => {
    const response = await post({ background: { image: 'AAAAAAAAAAAAAAAAAAAAAA' } });
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json()).toMatchObject({ error: { code: 'UNKNOWN_ASSET', field: 'background.image' } });
  });
});
