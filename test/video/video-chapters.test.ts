import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TtsVideoResponse } from '../../src/api/video.js';
import { chaptersText } from '../../src/speech/chapters.js';
import { frameSize } from '../../src/video/frame.js';
import { CARD_SECONDS, keyFrames, layoutCaptions } from '../../src/video/layout.js';
import { useTestApp } from '../helpers/helpers.js';
import { decodeFrame } from '../helpers/media.js';
import { toneSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const CHAPTERS = [
  { title: 'The Harbour', text: 'The fog lifted over the harbour at dawn, and the boats went out one by one into the grey water.' },
  { title: 'The Lighthouse', text: 'An old keeper climbed the stairs every night to light the lamp, and he counted every step twice.' },
  { title: 'Home Again', text: 'By evening the boats came back, full of fish, and the whole town came down to the quay to meet them.' },
];

/** Bright pixels (captions and titles are white on the dark default background) in rows [top, bottom) of an RGB24 frame. */
function brightIn(frame: Buffer, width: number, top: number, bottom: number): number {
  let count = 0;
  for (let offset = top * width * 3; offset < bottom * width * 3; offset += 3) {
    if ((frame[offset] ?? 0) > 200 && (frame[offset + 1] ?? 0) > 200 && (frame[offset + 2] ?? 0) > 200) count += 1;
  }
  return count;
}

describe('chapter cards', () => {
  const t = useTestApp();

  it('shows each chapter\'s title as a card from its first word, in the frames of the video', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { chapters: CHAPTERS, voice: 'espeak-ng:en-us', resolution: '720p', aspect_ratio: '9:16' } });
    expect(response.statusCode, response.body).toBe(200);
    const answer = response.json<TtsVideoResponse>();
    expect(answer.renderPath).toBe('spliced');
    expect(answer.chapters?.map((chapter) => chapter.title)).toEqual(CHAPTERS.map((chapter) => chapter.title));
    expect(answer.chaptersUrl).toMatch(/\.chapters\.vtt$/);
    const file = path.join(t.outputDir, 'video', path.basename(answer.url));
    const { width, height } = answer;
    // The top third holds the titles alone (the captions are lower down).
    const titleRows = (frame: Buffer) => brightIn(frame, width, 0, Math.round(height / 3));
    const frameAt = (seconds: number) => decodeFrame(file, Math.round(seconds * FPS), FPS);
    const cards: Buffer[] = [];
    for (const [index, chapter] of (answer.chapters ?? []).entries()) {
      const during = await frameAt(chapter.start + 1);
      const after = await frameAt(Math.min(chapter.end, chapter.start + CARD_SECONDS) + 0.5);
      expect(chapter.end - chapter.start, `chapter ${index} is long enough to see its card go`).toBeGreaterThan(CARD_SECONDS + 1);
      expect(titleRows(during), `chapter ${index}: its card shows`).toBeGreaterThan(300);
      expect(titleRows(after), `chapter ${index}: its card is gone`).toBeLessThan(20);
      if (index > 0) expect(titleRows(await frameAt(chapter.start - 0.3)), `chapter ${index}: no card before it starts`).toBeLessThan(20);
      cards.push(during.subarray(0, width * 3 * Math.round(height / 3)));
    }
    // Three different titles drawn.
    expect(cards[0]?.equals(cards[1] as Buffer)).toBe(false);
    expect(cards[1]?.equals(cards[2] as Buffer)).toBe(false);
    const vtt = (await t.fetchFile(answer.chaptersUrl as string)).body.toString('utf8');
    expect(vtt).toContain('The Lighthouse');
  });

  it('starts and ends a card where the picture changes: the splicer encodes those frames', () => {
    const text = chaptersText(CHAPTERS);
    const written = text.replace(/^# /gmu, '');
    const speech = { ...toneSpeech(written), chapters: CHAPTERS.map((chapter) => ({ title: chapter.title, offset: written.indexOf(chapter.title) })) };
    const captions = layoutCaptions({ text: written, speech, size: frameSize('720p', '9:16'), aspectRatio: '9:16', fps: FPS, title: { text: 'A hook', seconds: 1 } });
    // The first chapter starts under the hook: no card of its own.
    expect(captions.cards?.map((card) => card.lines.join(' '))).toEqual(['The Lighthouse', 'Home Again']);
    const changes = keyFrames(captions);
    for (const card of captions.cards ?? []) {
      expect(changes).toContain(card.startFrame);
      expect(card.endFrame - card.startFrame).toBeLessThanOrEqual(CARD_SECONDS * FPS);
      if (card.endFrame < captions.frames) expect(changes).toContain(card.endFrame);
    }
  });
});
