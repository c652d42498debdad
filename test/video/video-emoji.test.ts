import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasEmoji, isEmoji, onlyEmoji, silenceEmoji } from '../../src/engines/emoji-text.js';
import { sanitizeText } from '../../src/engines/mapped-text.js';
import { assScript } from '../../src/video/ass.js';
import { CAPTION_STYLES, type CaptionStyleName } from '../../src/video/caption-style.js';
import { captionFont, fontsDirFor } from '../../src/video/font.js';
import { frameSize, type FrameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { filterValue } from '../../src/video/render.js';
import { layerDrawing, twemojiLayers, twemojiName } from '../../src/video/twemoji.js';
import type { AspectRatio } from '../../src/api/video-options.js';
import type { ErrorBody } from '../../src/api/errors.js';
import { decodeFrame, runFfmpeg } from '../helpers/media.js';
import { postTts, useTestApp } from '../helpers/helpers.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { toneSpeech } from '../helpers/video-helpers.js';

const work = useTempDir('voxreel-emoji-');
const FPS = 30;
const TEXT = 'Lift off 🚀🔥👍✅ from Japan 🇯🇵 with the family 👨‍👩‍👧 today.';
const PLAIN = 'Lift off from Japan with the family today.';

const graphemes = (text: string) => [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)].map((part) => part.segment);

interface Colours {
  /** Leftmost and rightmost column of the warm and green pixels in the rows of the green ones (✅'s line: the flag is red too). */
  left: number;
  right: number;
  /** Saturated red to orange (hue 0–38° or over 340°): 🔥 and 🚀, never the white text nor the highlight (#FFD23F, 46°). */
  warm: number;
  /** Saturated green (hue 80–160°): ✅. */
  green: number;
  /** Saturated blue (hue 190–250°): the rocket's body, the family's square. */
  blue: number;
}

/** Counts of saturated, bright pixels of an RGB24 frame by hue. */
function colours(frame: Buffer, width: number): Colours {
  const counts: Colours = { left: Infinity, right: -Infinity, warm: 0, green: 0, blue: 0 };
  const warmAt: number[] = [];
  const greenAt: number[] = [];
  const column = (at: number) => {
    counts.left = Math.min(counts.left, (at / 3) % width);
    counts.right = Math.max(counts.right, (at / 3) % width);
  };
  const hues = (at: number) => {
    const [r, g, b] = [frame[at] as number, frame[at + 1] as number, frame[at + 2] as number];
    const max = Math.max(r, g, b);
    const min = Math.min(r, g, b);
    if (max < 110 || (max - min) / max < 0.5) return;
    const delta = max - min;
    const hue = max === r ? (60 * ((g - b) / delta) + 360) % 360 : max === g ? 60 * ((b - r) / delta) + 120 : 60 * ((r - g) / delta) + 240;
    if (hue <= 38 || hue >= 340) warmAt.push(at);
    else if (hue >= 80 && hue <= 160) greenAt.push(at);
    else if (hue >= 190 && hue <= 250) counts.blue += 1;
  };
  for (let at = 0; at + 2 < frame.length; at += 3) hues(at);
  counts.warm = warmAt.length;
  counts.green = greenAt.length;
  const row = (at: number) => Math.floor(at / 3 / width);
  const [top, bottom] = [Math.min(...greenAt.map(row)), Math.max(...greenAt.map(row))];
  for (const at of [...warmAt, ...greenAt]) if (row(at) >= top && row(at) <= bottom) column(at);
  return counts;
}

describe('emoji in text', () => {
  it('are grapheme clusters presented as emoji: sequences whole, text-presentation symbols not', () => {
    expect(graphemes('🇯🇵👍🏽👨‍👩‍👧1️⃣❤️').every(isEmoji)).toBe(true);
    expect(graphemes('🇯🇵👍🏽👨‍👩‍👧1️⃣❤️')).toHaveLength(5);
    for (const text of ['★', '❤', '©', '1', '#', 'a', '👍\uFE0E']) expect(isEmoji(text), text).toBe(false);
    expect(hasEmoji('no emoji ★ here')).toBe(false);
    expect(onlyEmoji(' 🚀 🔥👍 ')).toBe(true);
    expect(onlyEmoji('🚀 a')).toBe(false);
  });

  it('are blanked for every engine, one space for one UTF-16 unit, so offsets still point into the text', () => {
    const text = 'Go 🚀 now 🇯🇵! ★ stays';
    for (const blanked of [silenceEmoji(text), sanitizeText(text)]) {
      expect(blanked).toHaveLength(text.length);
      expect(blanked.indexOf('now')).toBe(text.indexOf('now'));
      expect(hasEmoji(blanked)).toBe(false);
      expect(blanked).toContain('★');
    }
  });

  it('map to Twemoji pictures, with and without U+FE0F', () => {
    expect(twemojiName('🇯🇵')).toBe('1f1ef-1f1f5');
    expect(twemojiName('👍🏽')).toBe('1f44d-1f3fd');
    expect(twemojiName('👨‍👩‍👧')).toBe('1f468-200d-1f469-200d-1f467');
    expect(twemojiName('1️⃣')).toBe('31-20e3');
    expect(twemojiName('❤️')).toBe('2764');
    expect(twemojiName('a')).toBeUndefined();
    const fire = twemojiLayers('1f525');
    expect(fire.map((layer) => layer.colour)).toEqual(['F4900C', 'FFCC4D']);
    // Every layer of a picture spans the same square, so libass lays them out alike.
    for (const layer of [...fire, undefined]) expect(layerDrawing(layer, 400, 24).startsWith('m 0 0 m 400 400')).toBe(true);
    expect(layerDrawing(fire[0], 400, 24)).toMatch(/^m 0 0 m 400 400 m \d+ \d+ b( -?\d+)+/);
  });

  it('are measured as one square of the em each, and never refused', () => {
    const font = captionFont();
    const runs = font.runs('off 🚀🔥 ok');
    expect(runs.map((run) => [run.text, run.emoji])).toEqual([
      ['off ', undefined],
      ['🚀', '1f680'],
      ['🔥', '1f525'],
      [' ok', undefined],
    ]);
    expect(font.width('🇯🇵', 100)).toBeCloseTo(font.emojiEms * 100, 6);
    expect(font.width('👨‍👩‍👧', 100)).toBeCloseTo(font.emojiEms * 100, 6);
    expect(font.width('a 🚀 b', 50) - font.width('a  b', 50)).toBeCloseTo(font.emojiEms * 50, 6);
    expect(font.missingCharacters('🚀 🫪 👨‍👩‍👧')).toEqual([]);
    // No picture and no face: left out of the drawing, never a box.
    expect(font.runs('a 🫪 b').some((run) => run.text.includes('🫪'))).toBe(false);
  });
});

describe('emoji in the captions script', () => {
  it.each(['Number 1️⃣ wins', 'Go 🇯🇵 team', 'So 👍🏽 good'])('%s: the caption event holds a blank square, the layers above it the shapes', (text) => {
    const captions = layoutCaptions({ text, speech: toneSpeech(text), size: frameSize('720p', '16:9'), aspectRatio: '16:9', fps: FPS, look: { style: 'subtitle' } });
    const events = assScript(captions).split('\n').filter((line) => line.startsWith('Dialogue:'));
    // The box, the line with its blank square, then one event per shape of the picture.
    expect(events.length).toBeGreaterThanOrEqual(4);
    expect(events[1]).toMatch(/^Dialogue: 1,.*\{\\p4\\pbo\d+\\alpha&HFF&\}m 0 0 m \d+ \d+\{\\p0/);
    expect(events[2]).toMatch(/^Dialogue: 2,.*\\1c&H[0-9A-F]{8}&\\1a&H[0-9A-F]{2}&\}m 0 0 m \d+ \d+ m /);
    // The emoji are drawn, never written as text.
    expect(hasEmoji(events.join('\n'))).toBe(false);
    expect(events.join('\n')).not.toContain('\u20E3');
  });
});

describe('emoji in cues', () => {
  const cues = (text: string, style: CaptionStyleName, aspectRatio: AspectRatio = '9:16') =>
    layoutCaptions({ text, speech: toneSpeech(text), size: frameSize('1080p', aspectRatio), aspectRatio, fps: FPS, look: { style } }).cues.map((cue) =>
      cue.lines.map((line) => line.map((piece) => piece.text)),
    );

  it.each(CAPTION_STYLES)('%s: an emoji stays with the word it follows; one at the start with the word after', (style) => {
    const together = {
      'It is on 🔥 and we love it 👍🏽 so much.': ['on 🔥', 'it 👍🏽'],
      '🔥 Hot news from Japan 🇯🇵 today.': ['🔥 Hot', 'Japan 🇯🇵'],
      // With a mark after it, and right to left.
      'مرحبا 👋 بكم في قناتنا 🔥.': ['مرحبا 👋', 'قناتنا 🔥.'],
    };
    for (const [text, words] of Object.entries(together)) {
      const lines = cues(text, style).flat();
      for (const line of lines) expect(hasEmoji(line[0]?.split(' ')[0] ?? ''), JSON.stringify(lines)).toBe(line === lines[0] && text.startsWith('🔥'));
      expect(lines.flat()).toEqual(expect.arrayContaining(words));
    }
  });

  it.each(CAPTION_STYLES)('%s: five stars stay on one cue', (style) => {
    for (const text of ['Honestly the pizza here is rated ★★★★★ by everyone.', '★★★★★ Best pizza in town! Rated ★★★★★ by all.']) {
      for (const cue of cues(text, style)) {
        const stars = cue.flat().join(' ').match(/★+/g) ?? [];
        for (const run of stars) expect(run, JSON.stringify(cue)).toBe('★★★★★');
      }
    }
  });
});

/**
 * The frame of the caption state that shows "off" drawn by libass over a dark background (RGB24), and where layout
 * put 🚀🔥👍✅ (screenshots of every style: video-scripts.test.ts).
 */
async function drawnFrame(text: string, style: CaptionStyleName, size: FrameSize): Promise<{ frame: Buffer; emoji: { left: number; right: number } }> {
  const captions = layoutCaptions({ text, speech: toneSpeech(text), size, aspectRatio: '9:16', fps: FPS, look: { style } });
  const state = captions.states.find((candidate) => captions.cues[candidate.cue]?.lines.flat().some((piece) => piece.text.includes('off'))) ?? captions.states[0];
  const file = path.join(work, `${style}-${hasEmoji(text) ? 'emoji' : 'plain'}.ass`);
  await writeFile(file, assScript(captions));
  const at = ((state?.startFrame ?? 0) + 0.5) / FPS;
  const filter = `ass=filename=${filterValue(file)}:fontsdir=${filterValue(fontsDirFor(file))}:shaping=complex`;
  const input = ['-f', 'lavfi', '-i', `color=0x0F172A:s=${size.width}x${size.height}:d=${(captions.frames + 1) / FPS}:r=${FPS}`];
  const { stdout } = await runFfmpeg(['-v', 'error', ...input, '-vf', filter, '-ss', at.toFixed(3), '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
  // Lines are centred between the margins.
  const font = captionFont();
  const { box } = captions;
  const line = captions.cues[state?.cue ?? 0]?.lines.find((candidate) => candidate.some((piece) => piece.text.includes('off'))) ?? [];
  const centre = box.marginLeft + (box.width - box.marginLeft - box.marginRight) / 2;
  const shown = line.map((piece) => piece.text).join(' ');
  const left = centre - font.width(shown, box.fontSize) / 2 + font.width(shown.slice(0, shown.indexOf('🚀')), box.fontSize);
  return { frame: stdout, emoji: { left, right: left + 4 * font.emojiEms * box.fontSize } };
}

describe('emoji drawn in colour', () => {
  it.each(CAPTION_STYLES)('%s: 🚀🔥👍✅ in their colours where the text without them has none', async (style) => {
    const size = frameSize('720p', '9:16');
    const [withEmoji, without] = await Promise.all([drawnFrame(TEXT, style, size), drawnFrame(PLAIN, style, size)]);
    const [drawn, plain] = [colours(withEmoji.frame, size.width), colours(without.frame, size.width)];
    expect(plain).toMatchObject({ warm: 0, green: 0, blue: 0 });
    expect(drawn.warm).toBeGreaterThan(400);
    expect(drawn.green).toBeGreaterThan(400);
    expect(drawn.blue).toBeGreaterThan(150);
    // Where layout measured them (the bold style's lit word is drawn larger than measured).
    const slack = style === 'bold' ? 0.12 * (withEmoji.emoji.right - withEmoji.emoji.left) : 3;
    expect(drawn.left).toBeGreaterThanOrEqual(withEmoji.emoji.left - slack);
    expect(drawn.right).toBeLessThanOrEqual(withEmoji.emoji.right + slack);
    expect(drawn.right - drawn.left).toBeGreaterThan(0.8 * (withEmoji.emoji.right - withEmoji.emoji.left));
  });
});

describe('over HTTP', () => {
  const t = useTestApp();

  it('/tts: audio, and timestamps whose spans skip the emoji; the captions keep them with their word', async () => {
    const text = 'Lift off 🚀🔥 and 👍 well done ✅ 🇯🇵 🔥!';
    const result = await postTts(t.app, { text, voice: 'espeak-ng:en-us', timestamps: true });
    expect(result.duration).toBeGreaterThan(0.5);
    const words = result.words ?? [];
    expect(words.map((word) => word.word)).toEqual(['Lift', 'off', 'and', 'well', 'done']);
    for (const word of words) {
      expect(word.word).toBe(text.slice(word.text_offset, word.text_offset + word.text_length));
      expect(hasEmoji(word.word)).toBe(false);
    }
    const vtt = (await t.fetchFile(result.captionsUrl as string)).body.toString('utf8');
    expect(vtt).toContain('off 🚀🔥');
    expect(vtt).toContain('done ✅ 🇯🇵 🔥!');
  });

  it.each(['/tts', '/tts-video'])('%s: text of emoji alone → 422 UNSUPPORTED_TEXT, before any engine runs', async (url) => {
    const response = await t.app.inject({ method: 'POST', url, payload: { text: '🚀 🔥👍 🇯🇵', voice: 'espeak-ng:en-us' } });
    expect(response.statusCode, response.body).toBe(422);
    const { error } = response.json<ErrorBody>();
    expect(error).toMatchObject({ code: 'UNSUPPORTED_TEXT', field: 'text' });
    expect(error.message).toContain('only emoji');
  });

  it('/tts-video: renders 🚀🔥👍✅, a flag and a family in colour at the caption, against the same video without them', async () => {
    const make = async (text: string, name: string) => {
      const response = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { text, voice: 'espeak-ng:en-us', resolution: '720p' } });
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json<{ url: string; captionsUrl: string }>();
      const file = path.join(work, `${name}.mp4`);
      await writeFile(file, (await t.fetchFile(body.url)).body);
      const vtt = (await t.fetchFile(body.captionsUrl)).body.toString('utf8');
      // The frame a little after the cue that shows "off" begins.
      const cue = vtt.split('\n\n').find((block) => block.includes('off'));
      const [h = 0, m = 0, s = 0] = (cue?.split(' --> ')[0] ?? '').split(':').map(Number);
      return { frame: await decodeFrame(file, Math.ceil((h * 3600 + m * 60 + s) * FPS) + 3, FPS), vtt };
    };
    const [drawn, plain] = await Promise.all([make(TEXT, 'emoji'), make(PLAIN, 'plain')]);
    expect(drawn.vtt).toContain('off 🚀🔥👍✅');
    const [withEmoji, without] = [colours(drawn.frame, 720), colours(plain.frame, 720)];
    expect(without.warm).toBeLessThan(10);
    expect(without.green).toBeLessThan(10);
    expect(withEmoji.warm).toBeGreaterThan(400);
    expect(withEmoji.green).toBeGreaterThan(400);
  });
});
