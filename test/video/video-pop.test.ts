// Issue 24: captions that read on a phone. The pop style (big, one to three words, thick outline, the spoken word
// growing in), caption_case, and a word too long for the frame shrunk to fit; frames decoded and measured.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assScript } from '../../src/video/ass.js';
import { POP_SIZES, type CaptionLook } from '../../src/video/caption-style.js';
import type { Captions } from '../../src/video/captions.js';
import { frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { renderVideo } from '../../src/video/render.js';
import { decodeErrors, decodeFrame, ffmpeg, screenshot } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { useTestApp } from '../helpers/helpers.js';
import { captionPixels, toneSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const TEXT = 'Creators post captions like these, big and bold, one beat at a time';
const dir = useTempDir('voxreel-pop-');

async function render(name: string, text: string, look: Partial<CaptionLook>): Promise<{ file: string; captions: Captions }> {
  const speech = toneSpeech(text, { wordSeconds: 0.4, gapSeconds: 0.1 });
  const size = frameSize('1080p', '9:16');
  const captions = layoutCaptions({ text, speech, size, aspectRatio: '9:16', fps: FPS, look });
  const file = path.join(dir, `${name}.mp4`);
  await renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate: 'constant', captions, output: file });
  expect(await decodeErrors(file)).toBe('');
  return { file, captions };
}

/** Rows of an RGB24 frame holding a pixel near the highlight colour: how tall the lit word is drawn. */
function litHeight(frame: Buffer, width: number): number {
  const rows = new Set<number>();
  for (let offset = 0; offset + 2 < frame.length; offset += 3) {
    const [r, g, b] = [frame[offset] as number, frame[offset + 1] as number, frame[offset + 2] as number];
    if (Math.abs(r - 0xff) + Math.abs(g - 0xd2) + Math.abs(b - 0x3f) < 60) rows.add(Math.floor(offset / 3 / width));
  }
  return rows.size;
}

/** One frame for a person to look at: test-results/creator/<name>.png. */
const creatorScreenshot = (name: string, file: string, frame: number) => screenshot('creator', name, file, frame);

describe('pop captions', () => {
  it('shows one to three big words at a time in the middle of the 9:16 safe area, 7-9 % of the frame high', async () => {
    const { file, captions } = await render('pop', TEXT, { style: 'pop' });
    const { width, height } = captions.box;
    expect(captions.box.fontSize / height).toBeGreaterThan(0.07);
    expect(captions.box.fontSize / height).toBeLessThan(0.09);
    for (const cue of captions.cues) {
      expect(cue.lines).toHaveLength(1);
      expect(new Set(cue.lines.flat().map((piece) => piece.word)).size).toBeLessThanOrEqual(3);
    }
    const settled = captions.states.find((state) => state.grow === undefined && state.startFrame > 30)!;
    const { box } = captionPixels(await decodeFrame(file, settled.startFrame, FPS), width);
    expect(Math.abs((box!.top + box!.bottom) / 2 - height / 2)).toBeLessThan(height * 0.12);
    expect(box!.left).toBeGreaterThanOrEqual(width * 0.06 - 4);
    expect(box!.right).toBeLessThanOrEqual(width * 0.85);
    await creatorScreenshot('pop-9x16', file, settled.startFrame);
  });

  it('grows the spoken word in over its first frames (about 80 ms), then holds it at its lit size', async () => {
    const { file, captions } = await render('pop-grow', TEXT, { style: 'pop' });
    const growing = captions.states.filter((state) => state.grow !== undefined);
    // Two growing frames at 30 fps for every lit word long enough, then the word at its size.
    expect(growing.length).toBeGreaterThan(captions.words.length * 1.5);
    expect(new Set(growing.map((state) => state.grow))).toEqual(new Set(POP_SIZES.slice(0, 2)));
    const first = growing.find((state) => state.grow === POP_SIZES[0] && state.startFrame > 20)!;
    const small = litHeight(await decodeFrame(file, first.startFrame, FPS), captions.box.width);
    const full = litHeight(await decodeFrame(file, first.startFrame + 3, FPS), captions.box.width);
    expect(small).toBeGreaterThan(20);
    expect(full / small).toBeGreaterThan(1.15);
    expect(assScript(captions)).toContain('\\fscx88\\fscy88');
  });

  it('draws a thick outline: dark pixels around the letters, wider than karaoke\'s', async () => {
    const pop = layoutCaptions({ text: TEXT, speech: toneSpeech(TEXT), size: frameSize('1080p', '9:16'), aspectRatio: '9:16', fps: FPS, look: { style: 'pop' } });
    const karaoke = layoutCaptions({ text: TEXT, speech: toneSpeech(TEXT), size: frameSize('1080p', '9:16'), aspectRatio: '9:16', fps: FPS });
    expect(pop.box.outline / pop.box.fontSize).toBeGreaterThan(0.1);
    expect(pop.box.outline).toBeGreaterThan(karaoke.box.outline * 3);
    expect(pop.box.shadow).toBeGreaterThan(0);
    const custom = layoutCaptions({ text: TEXT, speech: toneSpeech(TEXT), size: frameSize('1080p', '9:16'), aspectRatio: '9:16', fps: FPS, look: { style: 'pop', outline: 0.04 } });
    expect(custom.box.outline).toBe(Math.round(custom.box.fontSize * 0.04));
  });

  it('writes the captions in capitals with caption_case upper, measured as drawn', async () => {
    const { file, captions } = await render('pop-upper', TEXT, { style: 'pop', textCase: 'upper' });
    const script = assScript(captions);
    expect(script).toContain('CREATORS');
    expect(script).not.toMatch(/\bcaptions\b/u);
    // The words themselves (and so the WebVTT file) keep the text as written.
    expect(captions.words.map((word) => word.text).join(' ')).toBe(TEXT);
    const settled = captions.states.find((state) => state.grow === undefined && state.startFrame > 30)!;
    const { box } = captionPixels(await decodeFrame(file, settled.startFrame, FPS), captions.box.width);
    expect(box!.right).toBeLessThanOrEqual(captions.box.width * 0.85);
    await creatorScreenshot('pop-upper-9x16', file, settled.startFrame);
  });

  it('draws a box in the highlight colour behind the spoken word only, the word in the text colour (highlight_box)', async () => {
    const highlightPixels = (frame: Buffer, width: number) => {
      let count = 0;
      let [left, right] = [width, 0];
      for (let offset = 0; offset + 2 < frame.length; offset += 3) {
        const [r, g, b] = [frame[offset] as number, frame[offset + 1] as number, frame[offset + 2] as number];
        if (Math.abs(r - 0xff) + Math.abs(g - 0xd2) + Math.abs(b - 0x3f) >= 60) continue;
        count += 1;
        const x = (offset / 3) % width;
        [left, right] = [Math.min(left, x), Math.max(right, x)];
      }
      return { count, left, right };
    };
    for (const style of ['pop', 'karaoke'] as const) {
      const plain = await render(`${style}-lit`, TEXT, { style });
      const boxed = await render(`${style}-box`, TEXT, { style, highlightBox: true });
      const words = (cue: number) => new Set(boxed.captions.cues[cue]?.lines.flat().map((piece) => piece.word)).size;
      const state = boxed.captions.states.find((entry) => entry.grow === undefined && entry.startFrame > 30 && words(entry.cue) >= 2)!;
      const { width } = boxed.captions.box;
      const lit = highlightPixels(await decodeFrame(plain.file, state.startFrame, FPS), width);
      const withBox = highlightPixels(await decodeFrame(boxed.file, state.startFrame, FPS), width);
      // A filled box holds more pixels in the colour than the word's letters (pop's thick outline covers much of it:
      // issue 38's box is one rectangle as tall as the line, no longer a box per glyph run).
      expect(withBox.count, style).toBeGreaterThan(lit.count * 1.2);
      // Around the spoken word only: narrower than all the words of the caption.
      const { box: drawn } = captionPixels(await decodeFrame(boxed.file, state.startFrame, FPS), width);
      expect(withBox.right - withBox.left, style).toBeLessThan((drawn!.right - drawn!.left) * 0.8);
      // The word drawn in the text colour on it: white pixels inside the box.
      const frame = await decodeFrame(boxed.file, state.startFrame, FPS);
      let white = 0;
      for (let offset = 0; offset + 2 < frame.length; offset += 3) {
        const x = (offset / 3) % width;
        if (x > withBox.left && x < withBox.right && Math.min(frame[offset] as number, frame[offset + 1] as number, frame[offset + 2] as number) > 235) white += 1;
      }
      expect(white, style).toBeGreaterThan(200);
      await creatorScreenshot(`${style}-highlight-box-9x16`, boxed.file, state.startFrame);
    }
  });

  it('shrinks a word too wide for the safe area to fit it', async () => {
    const text = 'Incomprehensibilities abound';
    const { file, captions } = await render('pop-long', text, { style: 'pop', textCase: 'upper' });
    const state = captions.states.find((entry) => entry.word === 0 && entry.grow === undefined)!;
    const { box } = captionPixels(await decodeFrame(file, state.startFrame, FPS), captions.box.width);
    expect(box!.left).toBeGreaterThanOrEqual(captions.box.width * 0.06 - 4);
    expect(box!.right).toBeLessThanOrEqual(captions.box.width * 0.85 + 4);
    await writeFile(path.join(dir, 'pop-long.ass'), assScript(captions));
  });
});

describe('POST /tts-video: platform presets and the pop options', () => {
  const t = useTestApp();
  const video = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/tts-video', payload: { text: 'Hello from voxreel, made for phones.', voice: 'espeak-ng:en-us', ...payload } });

  it('sets the size and aspect of each platform, and lets a field given as well win', async () => {
    const presets = [['tiktok', 1080, 1920], ['reels', 1080, 1920], ['shorts', 1080, 1920], ['instagram-feed', 1080, 1350], ['youtube', 1920, 1080]] as const;
    for (const [platform, width, height] of presets) {
      const response = await video({ platform, caption_style: 'pop', caption_case: 'upper', caption_outline: 0.15 });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toMatchObject({ width, height });
      await creatorScreenshot(`platform-${platform}`, path.join(t.outputDir, 'video', path.basename(response.json<{ url: string }>().url)), 20);
    }
    const titled = await video({ platform: 'shorts', resolution: '720p', title: 'Watch this', title_seconds: 1.5, subtitles: false });
    expect(titled.statusCode, titled.body).toBe(200);
    expect((await video({ title: '🚀' })).statusCode).toBe(200);
    const overridden = await video({ platform: 'tiktok', aspect_ratio: '1:1', resolution: '720p' });
    expect(overridden.json()).toMatchObject({ width: 720, height: 720 });
    const refused = await video({ platform: 'myspace' });
    expect(refused.statusCode).toBe(400);
    expect((await video({ caption_outline: 0.5 })).statusCode).toBe(400);
  });

  it("keeps tiktok's captions clear of its buttons: the platform's safe area", () => {
    const text = TEXT;
    const size = frameSize('1080p', '9:16');
    const reels = layoutCaptions({ text, speech: toneSpeech(text), size, aspectRatio: '9:16', fps: FPS, look: { platform: 'reels' } });
    const shorts = layoutCaptions({ text, speech: toneSpeech(text), size, aspectRatio: '9:16', fps: FPS, look: { platform: 'shorts' } });
    // Reels covers more of the bottom than Shorts: its captions sit higher.
    expect(reels.box.marginBottom).toBeGreaterThan(shorts.box.marginBottom + 100);
    // Its covered band, and above it the progress bar's lane (issue 38: two bar heights, 2 x 16 px at 1920).
    expect(reels.box.marginBottom).toBe(Math.round(1920 * 0.3) + 32);
  });
});

describe('emoji in pop (issue 38)', () => {
  /** The sharpest step of green between two neighbouring pixels over the flag's red disc and around it: a crisp edge is one or two pixels wide. */
  const sharpest = (frame: Buffer, width: number): number => {
    const red = (offset: number) => (frame[offset] as number) > 150 && (frame[offset + 1] as number) < 60 && (frame[offset + 2] as number) < 90;
    let box: { left: number; right: number; top: number; bottom: number } | undefined;
    for (let offset = 0; offset + 2 < frame.length; offset += 3) {
      if (!red(offset)) continue;
      const [x, y] = [(offset / 3) % width, Math.floor(offset / 3 / width)];
      box = box ? { left: Math.min(box.left, x), right: Math.max(box.right, x), top: Math.min(box.top, y), bottom: Math.max(box.bottom, y) } : { left: x, right: x, top: y, bottom: y };
    }
    expect(box, 'the flag is drawn').toBeDefined();
    let step = 0;
    for (let y = box!.top; y <= box!.bottom; y += 1) {
      for (let x = box!.left - 6; x < box!.right + 6; x += 1) {
        const at = (y * width + x) * 3 + 1;
        step = Math.max(step, Math.abs((frame[at] as number) - (frame[at + 3] as number)));
      }
    }
    return step;
  };

  it('draws emoji as crisp as karaoke does: the soft shadow blurs the text\'s outline, never the picture', async () => {
    const text = 'We love Tokyo 🇯🇵';
    const steps: number[] = [];
    for (const style of ['karaoke', 'pop'] as const) {
      const { file, captions } = await render(`emoji-${style}`, text, { style });
      const last = captions.states.at(-1)!;
      const frame = await decodeFrame(file, last.endFrame - 1, FPS);
      steps.push(sharpest(frame, captions.box.width));
      await screenshot('captions', `emoji-flag-${style}`, file, last.endFrame - 1);
    }
    const [karaoke, pop] = steps as [number, number];
    // Blurred (\blur3 on the picture), the disc's edge spread over some 8 pixels: steps of about 40.
    expect(pop).toBeGreaterThan(110);
    expect(pop).toBeGreaterThan(0.8 * karaoke);
  });
});

describe('a title over the first seconds', () => {
  it('is drawn at the top of the safe area while its seconds last, then gone; the captions go on below it', async () => {
    const text = 'The captions carry on below the title as the voice goes on speaking for a while';
    const speech = toneSpeech(text, { wordSeconds: 0.4, gapSeconds: 0.1 });
    const size = frameSize('1080p', '9:16');
    const captions = layoutCaptions({ text, speech, size, aspectRatio: '9:16', fps: FPS, look: { style: 'pop', textCase: 'upper' }, title: { text: 'Three facts you never knew', seconds: 2 } });
    expect(captions.title).toMatchObject({ endFrame: 60, top: captions.box.marginTop });
    const file = path.join(dir, 'title.mp4');
    await renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate: 'constant', captions, output: file });
    expect(await decodeErrors(file)).toBe('');
    const titleRows = (frame: Buffer) => {
      // Rows from the safe area's top down to where the captions' band would start without a title.
      const rows = frame.subarray(captions.box.marginTop * size.width * 3, (captions.box.marginTop + 2 * (captions.title?.fontSize ?? 0)) * size.width * 3);
      return captionPixels(rows, size.width).count;
    };
    const during = await decodeFrame(file, 30, FPS);
    const after = await decodeFrame(file, 75, FPS);
    expect(titleRows(during)).toBeGreaterThan(2000);
    expect(titleRows(after)).toBe(0);
    // The captions are drawn with and after it.
    expect(captionPixels(after, size.width).count).toBeGreaterThan(2000);
    await creatorScreenshot('title-9x16', file, 30);
  });
});
