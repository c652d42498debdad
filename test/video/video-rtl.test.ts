import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assScript, escapeAssText } from '../../src/video/ass.js';
import type { CaptionStyleName } from '../../src/video/caption-style.js';
import type { Captions } from '../../src/video/captions.js';
import { frameSize } from '../../src/video/frame.js';
import { fontsDirFor } from '../../src/video/font.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { filterValue } from '../../src/video/render.js';
import { runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { captionPixels, toneSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const SIZE = frameSize('720p', '16:9');
const work = useTempDir('voxreel-rtl-');
const RIGHT_TO_LEFT_ISOLATE = '\u2067';
const POP_ISOLATE = '\u2069';

/** Draws some events of a script (its style kept, each shown from 0 s) on a black frame: RGB24. */
async function draw(script: string, events: readonly string[], name: string): Promise<Buffer> {
  const head = script.split('\n').filter((line) => !line.startsWith('Dialogue:'));
  const file = path.join(work, `${name}.ass`);
  await writeFile(file, [...head, ...events.map((event) => event.replace(/^Dialogue: (\d+),[^,]*,[^,]*,/, 'Dialogue: $1,0:00:00.00,0:00:05.00,')), ''].join('\n'));
  const filter = `ass=filename=${filterValue(file)}:fontsdir=${filterValue(fontsDirFor(file))}:shaping=complex`;
  const { stdout } = await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', `color=black:s=${SIZE.width}x${SIZE.height}:d=1:r=${FPS}`, '-vf', filter, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
  return stdout;
}

/** Pixels drawn bright (text, lit or not; not outlines, boxes or background), as one bit each. */
function ink(frame: Buffer): Uint8Array {
  const mask = new Uint8Array(frame.length / 3);
  for (let pixel = 0; pixel < mask.length; pixel += 1) mask[pixel] = Math.max(frame[pixel * 3] as number, frame[pixel * 3 + 1] as number, frame[pixel * 3 + 2] as number) >= 128 ? 1 : 0;
  return mask;
}

/** The leftmost and rightmost inked columns: where the line's first and last marks (a full stop) stand. */
function inkedColumns(mask: Uint8Array): { left: number; right: number } {
  let left = SIZE.width;
  let right = -1;
  mask.forEach((bit, pixel) => {
    if (!bit) return;
    left = Math.min(left, pixel % SIZE.width);
    right = Math.max(right, pixel % SIZE.width);
  });
  return { left, right };
}

/** Share of the inked pixels of either frame that the other does not ink. */
function difference(a: Uint8Array, b: Uint8Array): number {
  let differing = 0;
  let inked = 0;
  for (let pixel = 0; pixel < a.length; pixel += 1) {
    if (a[pixel] || b[pixel]) inked += 1;
    if (a[pixel] !== b[pixel]) differing += 1;
  }
  return differing / Math.max(1, inked);
}

function captionsOf(text: string, style: CaptionStyleName, language?: string, title?: string): Captions {
  return layoutCaptions({ text, speech: toneSpeech(text), size: SIZE, aspectRatio: '16:9', fps: FPS, look: { style }, language, ...(title ? { title: { text: title, seconds: 1 } } : {}) });
}

/** The events of the script by caption state (the subtitle style draws a box and then each line), in order. */
function statesOf(script: string): string[][] {
  const byTime = new Map<string, string[]>();
  for (const event of script.split('\n').filter((line) => line.startsWith('Dialogue:'))) {
    const time = event.split(',').slice(1, 3).join(',');
    byTime.set(time, [...(byTime.get(time) ?? []), event]);
  }
  return [...byTime.values()];
}

/** The state's events with the text of its (one) line replaced by the whole line as one run isolated right to left, nothing lit; a box stays. */
function expectedEvents(events: readonly string[], text: string): string[] {
  return events.map((event) =>
    event.includes('\\p1') ? event : event.replace(/^((?:[^,]*,){9})(\{\\an5\\pos\([^)]*\)\})?.*$/, `$1$2${RIGHT_TO_LEFT_ISOLATE}${escapeAssText(text)}${POP_ISOLATE}`),
  );
}

describe('right-to-left captions', () => {
  const cases = [
    { name: 'arabic', text: 'مرحبا بكم في قناتنا.' },
    { name: 'hebrew', text: 'שלום לכולם וברוכים הבאים.' },
    { name: 'arabic-with-latin', text: 'نستخدم GPT في قناتنا اليوم.' },
  ];

  it.each(cases.flatMap((entry) => (['karaoke', 'subtitle'] as const).map((style) => ({ ...entry, style }))))(
    '$name, $style: every state draws the line as the expected string, in logical order, right to left, the lit word in place',
    async ({ name, text, style }) => {
      const captions = captionsOf(text, style);
      expect(captions.cues).toHaveLength(1);
      const script = assScript(captions);
      const states = statesOf(script);
      expect(states).toHaveLength(style === 'karaoke' ? text.split(' ').length : 1);
      // The expected drawing: the whole line as written, in one run isolated right to left, nothing lit.
      const expected = ink(await draw(script, expectedEvents(states[0] ?? [], text), `${name}-${style}-expected`));
      expect(expected.reduce((sum, bit) => sum + bit, 0)).toBeGreaterThan(500);
      for (const [index, events] of states.entries()) {
        const drawn = ink(await draw(script, events, `${name}-${style}-${index}`));
        // Antialiased edges of a lit (yellow) word differ a little from a white one's.
        expect(difference(drawn, expected), `state ${index} (${events.join(' | ')})`).toBeLessThan(0.06);
        // The full stop at the line's left end, where a reader of a right-to-left line expects it.
        const [edges, expectedEdges] = [inkedColumns(drawn), inkedColumns(expected)];
        expect(Math.abs(edges.left - expectedEdges.left)).toBeLessThanOrEqual(3);
        expect(Math.abs(edges.right - expectedEdges.right)).toBeLessThanOrEqual(3);
      }
      // What libass draws from the pieces written in logical order with a lit word between them (before bidi.ts): not the expected line.
      const pieces = captions.cues[0]?.lines[0] ?? [];
      const naive = pieces.map((piece, index) => (index === 1 ? `{\\1c&H0046D7FA&}${escapeAssText(piece.text)}{\\1c&H00FFFFFF&}` : escapeAssText(piece.text))).join(' ');
      if (style === 'karaoke') expect(difference(ink(await draw(script, [`Dialogue: 0,0,0,Caption,,0,0,0,,${naive}`], `${name}-${style}-naive`)), expected)).toBeGreaterThan(0.3);
    },
    60_000,
  );
});

describe('right-to-left paragraphs whose line, group or title starts with a Latin word (issue 38)', () => {
  // The paragraph's direction comes from the voice's language (or the text's first strong character), never from a
  // line's first word: "TikTok אוהב" reads "TikTok loves" right to left, TikTok on the right.
  const cases = [
    { name: 'hebrew-bold', language: 'he', style: 'bold' as const, text: 'TikTok אוהב סרטונים קצרים מאוד.' },
    { name: 'arabic-karaoke', language: 'ar', style: 'karaoke' as const, text: 'TikTok يحب الفيديوهات القصيرة.' },
    { name: 'arabic-subtitle', language: 'ar', style: 'subtitle' as const, text: 'TikTok يحب الفيديوهات القصيرة.' },
  ];

  it.each(cases)('$name: every state drawn as its line isolated right to left, the lit word in place', async ({ name, language, style, text }) => {
    const captions = captionsOf(text, style, language);
    const script = assScript(captions);
    const states = statesOf(script);
    expect(states.length).toBeGreaterThan(style === 'subtitle' ? 0 : 1);
    const byTime = new Map(captions.states.map((state) => [`${state.startFrame}`, state]));
    expect(byTime.size).toBeGreaterThan(0);
    for (const [index, events] of states.entries()) {
      const state = captions.states[index] ?? captions.states[0]!;
      const line = captions.cues[state.cue]?.lines[0] ?? [];
      const lineText = line.map((piece, at) => (at > 0 && piece.spaceBefore ? ' ' : '') + piece.text).join('');
      const expected = ink(await draw(script, expectedEvents(events, lineText), `${name}-${index}-expected`));
      // The lit word drawn at the size of the others (bold's 112 %): the order of the words is what is compared.
      const drawn = ink(await draw(script, events.map((event) => event.replace(/\\fsc[xy]\d+/g, '')), `${name}-${index}`));
      expect(difference(drawn, expected), `state ${index}: "${lineText}" (${events.join(' | ')})`).toBeLessThan(0.06);
      const [edges, expectedEdges] = [inkedColumns(drawn), inkedColumns(expected)];
      expect(Math.abs(edges.left - expectedEdges.left), lineText).toBeLessThanOrEqual(3);
      expect(Math.abs(edges.right - expectedEdges.right), lineText).toBeLessThanOrEqual(3);
    }
  }, 60_000);

  it('an Arabic title is laid out right to left: its emoji at the reader\'s end, on the left, inside the safe width', async () => {
    const captions = captionsOf('مرحبا بكم في قناتنا.', 'karaoke', 'ar', 'ثلاث حيل لا يعرفها أحد 🔥');
    const events = assScript(captions).split('\n').filter((line) => line.startsWith('Dialogue:') && line.includes(',Title,'));
    expect(events.length).toBeGreaterThan(1);
    const file = path.join(work, 'title.ass');
    await writeFile(file, [...assScript(captions).split('\n').filter((line) => !line.startsWith('Dialogue:')), ...events.map((event) => event.replace(/^Dialogue: (\d+),[^,]*,[^,]*,/, 'Dialogue: $1,0:00:00.00,0:00:05.00,')), ''].join('\n'));
    const filter = `ass=filename=${filterValue(file)}:fontsdir=${filterValue(fontsDirFor(file))}:shaping=complex`;
    const { stdout: frame } = await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', `color=black:s=${SIZE.width}x${SIZE.height}:d=1:r=${FPS}`, '-vf', filter, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
    // The fire's orange and red, and the letters' white.
    let [fire, fireCount, letters, letterCount] = [0, 0, 0, 0];
    for (let pixel = 0; pixel < frame.length / 3; pixel += 1) {
      const [r, g, b] = [frame[pixel * 3] as number, frame[pixel * 3 + 1] as number, frame[pixel * 3 + 2] as number];
      const x = pixel % SIZE.width;
      if (r > 180 && g < 170 && b < 90) [fire, fireCount] = [fire + x, fireCount + 1];
      else if (Math.min(r, g, b) > 200) [letters, letterCount] = [letters + x, letterCount + 1];
    }
    expect(fireCount).toBeGreaterThan(50);
    expect(letterCount).toBeGreaterThan(500);
    expect(fire / fireCount, 'the emoji stands left of the words').toBeLessThan(letters / letterCount - 50);
    const { box } = captionPixels(frame, SIZE.width);
    expect(box!.right).toBeLessThanOrEqual(SIZE.width - captions.box.marginRight + 2);
    expect(box!.left).toBeGreaterThanOrEqual(captions.box.marginLeft - 2);
  });

  it('a long Arabic title on TikTok stays inside the 85 % safe line, its outline included', async () => {
    const size = frameSize('1080p', '9:16');
    const text = 'مرحبا بكم في قناتنا.';
    const captions = layoutCaptions({ text, speech: toneSpeech(text), size, aspectRatio: '9:16', fps: FPS, language: 'ar', look: { platform: 'tiktok' }, title: { text: 'أفضل الحيل للمونتاج التي لا يخبرك بها أحد على الإطلاق 🔥', seconds: 1 } });
    const script = assScript(captions);
    const file = path.join(work, 'tiktok-title.ass');
    await writeFile(file, [...script.split('\n').filter((line) => !line.startsWith('Dialogue:')), ...script.split('\n').filter((line) => line.includes(',Title,')).map((event) => event.replace(/^Dialogue: (\d+),[^,]*,[^,]*,/, 'Dialogue: $1,0:00:00.00,0:00:05.00,')), ''].join('\n'));
    const filter = `ass=filename=${filterValue(file)}:fontsdir=${filterValue(fontsDirFor(file))}:shaping=complex`;
    const { stdout: frame } = await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', `color=black:s=${size.width}x${size.height}:d=1:r=${FPS}`, '-vf', filter, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
    // Any drawn pixel, the black outline's antialiased edge over black aside: the letters' and the emoji's.
    let [left, right] = [size.width, -1];
    for (let pixel = 0; pixel < frame.length / 3; pixel += 1) {
      if (Math.max(frame[pixel * 3] as number, frame[pixel * 3 + 1] as number, frame[pixel * 3 + 2] as number) < 40) continue;
      [left, right] = [Math.min(left, pixel % size.width), Math.max(right, pixel % size.width)];
    }
    expect(right, 'the title reaches this far').toBeGreaterThan(size.width * 0.6);
    expect(right + (captions.title ? Math.max(2, Math.round(captions.title.fontSize / 12)) : 0)).toBeLessThanOrEqual(size.width * 0.85);
    expect(left).toBeGreaterThanOrEqual(size.width * 0.06 - 2);
  });
});
