// Issue 38, point 1: the highlight box. One box on the spoken word, its emoji and punctuation inside it, whether the
// line has emoji or not: no stale box, no growing box, no box on the next line, no box split around a flag. Frames
// decoded from real renders, the box found by its colour and checked against the same state drawn without a box.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CaptionLook } from '../../src/video/caption-style.js';
import type { Captions } from '../../src/video/captions.js';
import { frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { renderVideo } from '../../src/video/render.js';
import { decodeErrors, decodeFrames, ffmpeg, screenshot } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { toneSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const SIZE = frameSize('720p', '9:16');
const dir = useTempDir('voxreel-highlight-box-');

async function render(name: string, text: string, look: Partial<CaptionLook>): Promise<{ file: string; captions: Captions }> {
  const speech = toneSpeech(text, { wordSeconds: 0.3, gapSeconds: 0.1 });
  const captions = layoutCaptions({ text, speech, size: SIZE, aspectRatio: '9:16', fps: FPS, look: { platform: 'tiktok', ...look } });
  const file = path.join(dir, `${name}.mp4`);
  await renderVideo(ffmpeg, { speech, size: SIZE, fps: FPS, frameRate: 'constant', captions, output: file });
  expect(await decodeErrors(file)).toBe('');
  return { file, captions };
}

interface Area {
  left: number;
  right: number;
  top: number;
  bottom: number;
  count: number;
}

const near = (frame: Buffer, pixel: number, [r, g, b]: readonly number[], within: number) =>
  Math.abs((frame[pixel * 3] as number) - (r as number)) + Math.abs((frame[pixel * 3 + 1] as number) - (g as number)) + Math.abs((frame[pixel * 3 + 2] as number) - (b as number)) < within;
const HIGHLIGHT = [0xff, 0xd2, 0x3f];
/** A caption letter's white (a flag's white, #EEE, is darker). */
const white = (frame: Buffer, pixel: number) => Math.min(frame[pixel * 3] as number, frame[pixel * 3 + 1] as number, frame[pixel * 3 + 2] as number) > 248;
/** An emoji's pixel: coloured, neither the highlight nor grey. */
const coloured = (frame: Buffer, pixel: number) => {
  const [r, g, b] = [frame[pixel * 3] as number, frame[pixel * 3 + 1] as number, frame[pixel * 3 + 2] as number];
  return Math.max(r, g, b) - Math.min(r, g, b) > 70 && !near(frame, pixel, HIGHLIGHT, 90);
};

/** Areas of 4-connected pixels that pass `test`, of at least `least` pixels (antialiased specks left out). */
function areas(frame: Buffer, test: (frame: Buffer, pixel: number) => boolean, least = 40): Area[] {
  const { width, height } = SIZE;
  const seen = new Uint8Array(width * height);
  const found: Area[] = [];
  const stack = new Int32Array(width * height);
  for (let start = 0; start < width * height; start += 1) {
    if (seen[start] || !test(frame, start)) continue;
    const area = { left: width, right: -1, top: height, bottom: -1, count: 0 };
    let depth = 0;
    stack[depth++] = start;
    seen[start] = 1;
    while (depth > 0) {
      const pixel = stack[--depth] as number;
      const [x, y] = [pixel % width, Math.floor(pixel / width)];
      Object.assign(area, { left: Math.min(area.left, x), right: Math.max(area.right, x), top: Math.min(area.top, y), bottom: Math.max(area.bottom, y), count: area.count + 1 });
      for (const next of [x > 0 ? pixel - 1 : -1, x < width - 1 ? pixel + 1 : -1, pixel - width, pixel + width]) {
        if (next < 0 || next >= width * height || seen[next] || !test(frame, next)) continue;
        seen[next] = 1;
        stack[depth++] = next;
      }
    }
    if (area.count >= least) found.push(area);
  }
  return found;
}

/** The bounding box of areas; undefined for none. */
const around = (found: readonly Area[]): Area | undefined =>
  found.length === 0
    ? undefined
    : { left: Math.min(...found.map((a) => a.left)), right: Math.max(...found.map((a) => a.right)), top: Math.min(...found.map((a) => a.top)), bottom: Math.max(...found.map((a) => a.bottom)), count: found.reduce((sum, a) => sum + a.count, 0) };

const inside = (area: Area, x: number, y: number, slack = 0) => x >= area.left - slack && x <= area.right + slack && y >= area.top - slack && y <= area.bottom + slack;

describe('the highlight box (issue 38)', () => {
  const texts = {
    // Emoji without the highlight's yellow in them (a rocket's flame would pass for a box).
    emoji: 'Ready for launch? 🎈 We love the world 🌍 and Tokyo 🇯🇵.',
    plain: 'Ready for launch? We love the world and Tokyo.',
  };

  it.each((['karaoke', 'pop'] as const).flatMap((style) => (['emoji', 'plain'] as const).map((kind) => ({ style, kind }))))(
    '$style, $kind: one box per state, around the lit word with its emoji and punctuation, on no other word',
    async ({ style, kind }) => {
      const text = texts[kind];
      const lit = await render(`${style}-${kind}-lit`, text, { style });
      const boxed = await render(`${style}-${kind}-box`, text, { style, highlightBox: true });
      const states = boxed.captions.states.filter((state) => state.grow === undefined);
      expect(states.length).toBeGreaterThanOrEqual(8);
      const frames = states.map((state) => state.startFrame);
      const [boxedFrames, litFrames] = await Promise.all([decodeFrames(boxed.file, frames, SIZE), decodeFrames(lit.file, frames, SIZE)]);
      for (const [index, state] of states.entries()) {
        const word = boxed.captions.words[state.word]?.text ?? '';
        const [withBox, withoutBox] = [boxedFrames[index] as Buffer, litFrames[index] as Buffer];
        const box = around(areas(withBox, (frame, pixel) => near(frame, pixel, HIGHLIGHT, 60) && !near(withoutBox, pixel, HIGHLIGHT, 60)));
        expect(box, `"${word}" at frame ${state.startFrame}: a box`).toBeDefined();
        if (!box) continue;
        // One box: as tall as one line (none on the next line), and unbroken from its left edge to its right (not one
        // per glyph run, none left on an earlier word, no gap around an emoji).
        expect(box.bottom - box.top, `"${word}": ${JSON.stringify(box)}`).toBeLessThan(1.6 * boxed.captions.box.fontSize);
        for (let x = box.left + 2; x <= box.right - 2; x += 1) {
          let rows = 0;
          for (let y = box.top; y <= box.bottom; y += 1) if (near(withBox, y * SIZE.width + x, HIGHLIGHT, 60)) rows += 1;
          expect(rows, `"${word}" at frame ${state.startFrame}: column ${x} of ${JSON.stringify(box)}`).toBeGreaterThan(0);
        }
        // The lit word's letters and punctuation (in the highlight colour without a box) all inside it.
        const letters = around(areas(withoutBox, (frame, pixel) => near(frame, pixel, HIGHLIGHT, 30), 4));
        expect(letters, word).toBeDefined();
        for (const [x, y] of [[letters!.left, letters!.top], [letters!.right, letters!.bottom]] as const) expect(inside(box, x, y, 1), `"${word}": letters ${JSON.stringify(letters)} in ${JSON.stringify(box)}`).toBe(true);
        // No other word's letters (white without a box) under it.
        let others = 0;
        for (let y = box.top; y <= box.bottom; y += 1) for (let x = box.left; x <= box.right; x += 1) if (white(withoutBox, y * SIZE.width + x)) others += 1;
        expect(others, `"${word}": white pixels of other words under its box`).toBeLessThan(12);
        // The word's emoji stand in its box (a flag followed by a full stop: both inside, in one box).
        if (/\p{Extended_Pictographic}|\p{Regional_Indicator}/u.test(word)) {
          const reach = letters!.right + (letters!.bottom - letters!.top) * 2;
          // Its emoji: between its letters (a flag before the full stop) or right after them.
          const emoji = areas(withoutBox, coloured, 20).filter((area) => (area.left + area.right) / 2 > letters!.left && area.left < reach && area.bottom > letters!.top && area.top < letters!.bottom);
          expect(emoji.length, `"${word}": its emoji found`).toBeGreaterThan(0);
          for (const area of emoji) expect(inside(box, area.right, area.bottom, 2) && inside(box, area.left, area.top, 2), `"${word}": emoji ${JSON.stringify(area)} in ${JSON.stringify(box)}`).toBe(true);
        }
      }
      const last = states.at(-1)!;
      await screenshot('captions', `highlight-box-${style}-${kind}`, boxed.file, last.startFrame);
    },
    120_000,
  );
});
