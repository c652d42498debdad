// Issue 38, point 2: the spliced path re-encodes only the caption band; the band must hold every glyph's real ink,
// marks above the line included (a Hindi caption's vowel signs stand well above its font size). Each state of the
// spliced render compared with the plain render of the same captions, which draws on the whole frame.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CaptionStyleName } from '../../src/video/caption-style.js';
import { frameSize } from '../../src/video/frame.js';
import { captionBand } from '../../src/video/caption-drawing.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { renderVideo } from '../../src/video/render.js';
import { decodeErrors, decodeFrames, ffmpeg, screenshot } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { toneSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const SIZE = frameSize('720p', '9:16');
const dir = useTempDir('voxreel-caption-band-');

const SCRIPTS = [
  // Vowel signs (े, ि, ें) and anusvara above the headline on the first line.
  { name: 'hindi', language: 'hi', text: 'मेरे प्यारे दोस्तों, नमस्ते। आज हम सीखेंगे कि छोटे वीडियो कैसे बनाएं।' },
  // Thai vowels and tone marks stacked above the consonants.
  { name: 'thai', language: 'th', text: 'ที่นี่มีน้ำใส ๆ และผู้คนใจดี ขอบคุณที่ติดตามนะครับ' },
] as const;

describe('the caption band on the spliced path (issue 38)', () => {
  const cases: Array<{ script: (typeof SCRIPTS)[number]; style: CaptionStyleName }> = [
    { script: SCRIPTS[0], style: 'karaoke' },
    { script: SCRIPTS[0], style: 'pop' },
    { script: SCRIPTS[1], style: 'karaoke' },
  ];
  it.each(cases.map(({ script, style }) => ({ ...script, style })))(
    '$name, $style: every state drawn as the plain render draws it, marks above the line included',
    async ({ name, language, text, style }) => {
      const speech = toneSpeech(text, { wordSeconds: 0.25, gapSeconds: 0.05 });
      const captions = layoutCaptions({ text, speech, size: SIZE, aspectRatio: '9:16', fps: FPS, language, look: { style } });
      const files = { spliced: path.join(dir, `${name}-${style}-spliced.mp4`), plain: path.join(dir, `${name}-${style}-plain.mp4`) };
      const spliced = await renderVideo(ffmpeg, { speech, size: SIZE, fps: FPS, frameRate: 'constant', captions, output: files.spliced });
      const plain = await renderVideo(ffmpeg, { speech, size: SIZE, fps: FPS, frameRate: 'constant', captions, output: files.plain, splice: false });
      expect([spliced.renderPath, plain.renderPath]).toEqual(['spliced', 'plain']);
      expect(await decodeErrors(files.spliced)).toBe('');
      const frames = [...new Set(captions.states.filter((state) => state.grow === undefined).map((state) => state.startFrame))];
      const [ours, theirs] = await Promise.all([decodeFrames(files.spliced, frames, SIZE), decodeFrames(files.plain, frames, SIZE)]);
      const band = captionBand(captions);
      let worst = { frame: -1, differing: 0, above: 0 };
      frames.forEach((frame, index) => {
        const [a, b] = [ours[index] as Buffer, theirs[index] as Buffer];
        let differing = 0;
        let above = 0;
        for (let offset = 0; offset < a.length; offset += 1) {
          if (Math.abs((a[offset] as number) - (b[offset] as number)) <= 60) continue;
          differing += 1;
          if (offset / 3 / SIZE.width < band.top + 8) above += 1;
        }
        if (differing > worst.differing) worst = { frame, differing, above };
      });
      // A clipped mark differs by hundreds of pixels; the two encodes of one picture by none over 60.
      expect(worst.differing, `frame ${worst.frame} (${worst.above} of them at the band's top edge, row ${band.top})`).toBeLessThan(20);
      await screenshot('captions', `band-${name}-${style}`, files.spliced, frames[1] ?? 0);
    },
    60_000,
  );
});
