import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import type { Speech } from '../../src/speech/speech.js';
import type { AspectRatio, VideoResolution } from '../../src/api/video.js';
import { boundaryCentiseconds } from '../../src/video/ass.js';
import { assertDrawable, captionFont } from '../../src/video/font.js';
import type { Captions } from '../../src/video/captions.js';
import { captionBox, frameSize } from '../../src/video/frame.js';
import { keyFrames, layoutCaptions } from '../../src/video/layout.js';
import { toneSpeech } from '../helpers/video-helpers.js';

const SIZES: Array<[VideoResolution, AspectRatio, number, number]> = [
  ['1080p', '16:9', 1920, 1080],
  ['1080p', '9:16', 1080, 1920],
  ['1080p', '1:1', 1080, 1080],
  ['1080p', '4:5', 1080, 1350],
  ['720p', '16:9', 1280, 720],
  ['720p', '9:16', 720, 1280],
  ['720p', '1:1', 720, 720],
  ['720p', '4:5', 576, 720],
];

const LONG_TEXT =
  'Every morning the harbour wakes before the town does. Fishing boats slide out past the lighthouse while the bakery ' +
  'on the corner starts its first batch of bread. By seven, the market stalls are open, and the smell of coffee drifts ' +
  'along the narrow streets. Supercalifragilisticexpialidocious-and-then-some-more-letters-than-any-line-can-hold ends it.';

function layout(text: string, aspectRatio: AspectRatio = '9:16', speech: Speech = toneSpeech(text), fps = 30): Captions {
  return layoutCaptions({ text, speech, size: frameSize('1080p', aspectRatio), aspectRatio, fps });
}

describe('frame sizes and safe areas', () => {
  for (const [resolution, aspectRatio, width, height] of SIZES) {
    it(`${resolution} ${aspectRatio} is ${width}×${height} with captions inside the safe area`, () => {
      const size = frameSize(resolution, aspectRatio);
      expect(size).toEqual({ width, height });
      const box = captionBox(size, aspectRatio);
      expect(Math.min(box.marginLeft, box.marginRight)).toBeGreaterThanOrEqual(width * 0.05);
      // Portrait: clear of the phone apps' column of buttons on the right.
      if (aspectRatio === '9:16') expect(box.marginRight).toBeGreaterThanOrEqual(width * 0.15);
      expect(box.maxLineWidth + 2 * box.outline).toBeLessThan(width - box.marginLeft - box.marginRight);
      // 9:16 and 4:5: above the buttons phone apps draw over the bottom of the picture.
      expect(box.marginBottom).toBeGreaterThanOrEqual(height * ({ '9:16': 0.2, '4:5': 0.11 }[aspectRatio as string] ?? 0.05));
      // Two lines fit above the bottom margin and below the top fifth.
      expect(box.marginBottom + 2 * box.fontSize * 1.25).toBeLessThan(height * 0.8);
    });
  }
});

describe('caption cues', () => {
  for (const aspectRatio of ['16:9', '9:16', '1:1', '4:5'] as const) {
    it(`${aspectRatio}: at most two lines per cue, each no wider than the box by the real font`, () => {
      const captions = layout(LONG_TEXT, aspectRatio);
      const font = captionFont();
      expect(captions.cues.length).toBeGreaterThan(2);
      for (const cue of captions.cues) {
        expect(cue.lines.length).toBeGreaterThanOrEqual(1);
        expect(cue.lines.length).toBeLessThanOrEqual(2);
        for (const line of cue.lines) {
          const text = line.map((piece) => piece.text).join(' ');
          expect(font.width(text, captions.box.fontSize), text).toBeLessThanOrEqual(captions.box.maxLineWidth);
        }
      }
    });
  }

  it('keeps every word, in order, and cuts only a word wider than a line', () => {
    const captions = layout(LONG_TEXT);
    const pieces = captions.cues.flatMap((cue) => cue.lines.flat());
    const rebuilt = captions.words.map((_, index) =>
      pieces
        .filter((piece) => piece.word === index)
        .map((piece) => piece.text)
        .join(''),
    );
    expect(rebuilt.join(' ')).toBe(LONG_TEXT);
    const long = captions.words.findIndex((word) => word.text.startsWith('Supercalifragilistic'));
    const cut = pieces.filter((piece) => piece.word === long);
    expect(cut.length).toBeGreaterThan(1);
    expect(pieces.filter((piece) => piece.word !== long).every((piece) => captions.words[piece.word]?.text === piece.text)).toBe(true);
  });

  it('lights each word on the first frame at or after its spoken start', () => {
    for (const fps of [24, 30, 60]) {
      const speech = toneSpeech(LONG_TEXT);
      const captions = layout(LONG_TEXT, '16:9', speech, fps);
      speech.words.forEach((word, index) => {
        const frame = captions.wordFrames[index] as number;
        expect(frame / fps).toBeGreaterThanOrEqual(word.start - 1e-9);
        expect((frame - 1) / fps).toBeLessThan(word.start);
      });
      for (const state of captions.states) {
        expect(state.startFrame).toBe(Math.max(captions.wordFrames[state.word] as number, captions.cues[state.cue]?.startFrame ?? 0));
      }
    }
  });

  it('orders cues and states without overlap, inside the video', () => {
    const captions = layout(LONG_TEXT);
    for (const list of [captions.cues, captions.states]) {
      list.forEach((item, index) => {
        expect(item.endFrame).toBeGreaterThan(item.startFrame);
        expect(item.endFrame).toBeLessThanOrEqual(captions.frames);
        if (index > 0) expect(item.startFrame).toBeGreaterThanOrEqual(list[index - 1]?.endFrame ?? 0);
      });
    }
    const frames = keyFrames(captions);
    expect(frames[0]).toBe(0);
    expect(frames.at(-1)).toBe(captions.frames - 1);
    expect(new Set(frames).size).toBe(frames.length);
    expect([...frames].sort((a, b) => a - b)).toEqual(frames);
  });

  it('turns the request’s line breaks into caption line breaks', () => {
    const text = 'one two\nthree four\r\nfive\u2028six';
    const captions = layout(text);
    const lines = captions.cues.map((cue) => cue.lines.map((line) => line.map((piece) => piece.text).join(' ')));
    expect(lines).toEqual([['one two', 'three four'], ['five', 'six']]);
  });

  it('spreads words over each sentence when the engine gives no word timings', () => {
    const text = 'A short one. Then a somewhat longer second sentence follows here.';
    const base = toneSpeech(text);
    const speech: Speech = {
      ...base,
      words: [],
      sentences: [
        { start: 0.1, end: 1.1, textOffset: 0, textLength: 12 },
        { start: 1.5, end: 4.5, textOffset: 13, textLength: text.length - 13 },
      ],
    };
    const captions = layout(text, '16:9', speech);
    expect(captions.words.map((word) => word.text)).toEqual(text.split(' '));
    expect(captions.words[0]?.start).toBeCloseTo(0.1, 6);
    expect(captions.words[3]?.start).toBeCloseTo(1.5, 6);
    for (const word of captions.words.slice(0, 3)) expect(word.end).toBeLessThanOrEqual(1.1 + 1e-9);
    for (const word of captions.words.slice(3)) expect(word.start).toBeGreaterThanOrEqual(1.5);
    captions.words.forEach((word, index) => index > 0 && expect(word.start).toBeGreaterThan(captions.words[index - 1]?.start ?? 0));
    // A new sentence starts a new cue.
    expect(captions.cues[1]?.lines[0]?.[0]?.text).toBe('Then');
  });

  it('folds a token no word event falls in into the word before it', () => {
    const text = 'wait — what';
    const speech = toneSpeech(text);
    speech.words.splice(1, 1);
    expect(layout(text, '16:9', speech).words.map((word) => word.text)).toEqual(['wait —', 'what']);
  });
});

describe('captions font', () => {
  it.each(['Hello, world!', 'Ελληνικά Привет שלום مرحبا بالعالم', 'Ça coûte 5 € — “déjà vu” ½ ✓ 😀', 'launch 🚀 now 🇯🇵 👨‍👩‍👧'])('draws %s', (text) => {
    expect(() => assertDrawable(text)).not.toThrow();
  });

  it.each(['ሰላም ዓለም', 'launch 🚀 ሰ', '𓀀 hieroglyph'])('refuses %s with UNSUPPORTED_TEXT', (text) => {
    let error: unknown;
    try {
      assertDrawable(text);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('UNSUPPORTED_TEXT');
    expect((error as AppError).statusCode).toBe(422);
    expect((error as AppError).field).toBe('text');
    expect((error as AppError).message).toContain('U+');
  });

  it('measures wider text wider, in proportion to the font size', () => {
    const font = captionFont();
    expect(font.width('Hello world', 70)).toBeGreaterThan(font.width('Hello', 70));
    expect(font.width('Hello world', 140)).toBeCloseTo(2 * font.width('Hello world', 70), 6);
  });
});

describe('ASS event times', () => {
  it('show a frame’s state on that frame and not on the one before, as ffmpeg computes frame times', () => {
    for (const fps of [24, 25, 30, 50, 60]) {
      // vf_subtitles: (long long)(pts * av_q2d(time_base) * 1000)
      const frameMs = (frame: number) => Math.trunc(frame * (1 / fps) * 1000);
      for (let frame = 1; frame < fps * 600; frame += 1) {
        const boundary = boundaryCentiseconds(frame, fps) * 10;
        expect(boundary).toBeLessThanOrEqual(frameMs(frame));
        expect(boundary).toBeGreaterThan(frameMs(frame - 1));
      }
    }
  });
});
