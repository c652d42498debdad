import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assScript } from '../../src/video/ass.js';
import { frameSize } from '../../src/video/frame.js';
import { captionFont, fontsDirFor } from '../../src/video/font.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { filterValue } from '../../src/video/render.js';
import { runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { captionPixels, toneSpeech } from '../helpers/video-helpers.js';

const FPS = 30;
const SIZE = frameSize('720p', '16:9');
const work = useTempDir('voxreel-glyph-forms-');
/** Characters whose Japanese, simplified and traditional Chinese glyphs differ. */
const TEXT = '今直骨';

/** The first caption state of TEXT spoken by a voice of `language`: its script, and its frame drawn (RGB24). */
async function drawn(language: string | undefined): Promise<{ script: string; frame: Buffer }> {
  const captions = layoutCaptions({ text: TEXT, speech: toneSpeech(TEXT), size: SIZE, aspectRatio: '16:9', fps: FPS, look: { style: 'subtitle' }, language });
  const script = assScript(captions);
  const file = path.join(work, `${language ?? 'none'}.ass`);
  await writeFile(file, script.replace(/^Dialogue: (\d+),[^,]*,[^,]*,/gm, 'Dialogue: $1,0:00:00.00,0:00:05.00,'));
  const filter = `ass=filename=${filterValue(file)}:fontsdir=${filterValue(fontsDirFor(file))}:shaping=complex`;
  const { stdout } = await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', `color=black:s=${SIZE.width}x${SIZE.height}:d=1:r=${FPS}`, '-vf', filter, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
  return { script, frame: stdout };
}

describe('CJK glyph forms follow the voice’s language', () => {
  it.each([
    ['ja', 'Noto Sans JP'],
    ['ja-JP', 'Noto Sans JP'],
    ['zh-TW', 'Noto Sans TC'],
    ['zh-HK', 'Noto Sans TC'],
    ['zh-Hant', 'Noto Sans TC'],
    ['yue', 'Noto Sans TC'],
    ['zh-CN', 'Noto Sans SC'],
    ['cmn', 'Noto Sans SC'],
    [undefined, 'Noto Sans SC'],
  ])('%s: %s', (language, family) => {
    expect(captionFont('sans', language).runs(TEXT)).toEqual([{ text: TEXT, face: expect.objectContaining({ family }), scale: expect.any(Number) }]);
    // Latin stays in the family's own face whatever the language.
    expect(captionFont('serif', language).runs('Hi')[0]?.face.family).toBe('Noto Serif');
  });

  it('draws Japanese, traditional and simplified forms, each different, and names the face in the script', async () => {
    const [japanese, traditional, simplified] = await Promise.all([drawn('ja'), drawn('zh-TW'), drawn('zh-CN')]);
    const faces = (script: string) => [...new Set([...script.matchAll(/\{\\fn([^}\\]*)/g)].map((match) => match[1]))];
    expect(faces(japanese.script)).toEqual(['Noto Sans JP', 'DejaVu Sans']);
    expect(faces(traditional.script)).toEqual(['Noto Sans TC', 'DejaVu Sans']);
    expect(faces(simplified.script)).toEqual(['Noto Sans SC', 'DejaVu Sans']);
    for (const { frame } of [japanese, traditional, simplified]) expect(captionPixels(frame, SIZE.width).count).toBeGreaterThan(500);
    expect(japanese.frame.equals(simplified.frame)).toBe(false);
    expect(traditional.frame.equals(simplified.frame)).toBe(false);
    expect(japanese.frame.equals(traditional.frame)).toBe(false);
  });
});

describe('Arabic and Hebrew fallbacks', () => {
  it('draw in Noto Sans Arabic and Noto Sans Hebrew where the family’s face lacks them, in DejaVu Sans for sans', () => {
    expect(captionFont('serif').runs('مرحبا')[0]?.face.family).toBe('Noto Sans Arabic');
    expect(captionFont('display').runs('שלום')[0]?.face.family).toBe('Noto Sans Hebrew');
    expect(captionFont('sans').runs('مرحبا שלום')[0]?.face.family).toBe('DejaVu Sans');
    expect(captionFont('display').missingCharacters('مرحبا שלום Привет')).toEqual([]);
  });
});
