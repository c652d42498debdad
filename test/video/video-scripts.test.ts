import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assScript } from '../../src/video/ass.js';
import { CAPTION_STYLES } from '../../src/video/caption-style.js';
import { frameSize } from '../../src/video/frame.js';
import { fontsDirFor } from '../../src/video/font.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { filterValue } from '../../src/video/render.js';
import { runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { captionPixels, toneSpeech } from '../helpers/video-helpers.js';

/** One frame per script and style, for a person to look at: test-results/scripts/<script>-<style>.png. */
const SCREENSHOTS = path.resolve('test-results/scripts');
const SIZE = frameSize('720p', '9:16');
const work = useTempDir('voxreel-scripts-');

/** A sentence in each script, with the voice language that picks its glyph forms. */
const SCRIPTS = [
  { name: 'english', language: 'en-US', text: 'Every morning the harbour wakes before the town does.' },
  { name: 'chinese', language: 'zh-CN', text: '每天早上，港口总是比城镇更早醒来。' },
  { name: 'japanese', language: 'ja', text: '今日はラーメンを食べに行きました。' },
  { name: 'korean', language: 'ko', text: '오늘의 추천 메뉴는 Korean BBQ 입니다.' },
  { name: 'hindi', language: 'hi', text: 'हर सुबह बंदरगाह शहर से पहले जागता है।' },
  { name: 'thai', language: 'th', text: 'ทุกเช้าท่าเรือตื่นขึ้นก่อนเมือง' },
  { name: 'arabic', language: 'ar', text: 'مرحبا بكم في قناتنا.' },
  { name: 'hebrew', language: 'he', text: 'שלום לכולם וברוכים הבאים.' },
  // Twemoji pictures, each in its colours (video-emoji.test.ts checks them).
  { name: 'emoji', language: 'en-US', text: 'Lift off 🚀🔥👍✅ from Japan 🇯🇵 with the family 👨‍👩‍👧 today.' },
] as const;

describe('every script in every style', () => {
  it.each(SCRIPTS.flatMap((script) => CAPTION_STYLES.map((style) => ({ ...script, style }))))('$name, $style: drawn inside the frame, a screenshot kept', async ({ name, language, text, style }) => {
    const captions = layoutCaptions({ text, speech: toneSpeech(text), size: SIZE, aspectRatio: '9:16', fps: 30, look: { style }, language });
    const state = captions.states[Math.floor(captions.states.length / 2)];
    expect(state).toBeDefined();
    const file = path.join(work, `${name}-${style}.ass`);
    await writeFile(file, assScript(captions));
    const at = ((state?.startFrame ?? 0) + 0.5) / 30;
    const filter = `ass=filename=${filterValue(file)}:fontsdir=${filterValue(fontsDirFor(file))}:shaping=complex`;
    const input = ['-f', 'lavfi', '-i', `color=0x0F172A:s=${SIZE.width}x${SIZE.height}:d=${(captions.frames + 1) / 30}:r=30`];
    const { stdout } = await runFfmpeg(['-v', 'error', ...input, '-vf', filter, '-ss', at.toFixed(3), '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
    const { count, box } = captionPixels(stdout, SIZE.width);
    expect(count).toBeGreaterThan(400);
    expect(box?.left).toBeGreaterThanOrEqual(captions.box.marginLeft - captions.box.outline - 4);
    expect(box?.right).toBeLessThanOrEqual(SIZE.width - captions.box.marginRight + captions.box.outline + 4);
    await mkdir(SCREENSHOTS, { recursive: true });
    await runFfmpeg(['-y', '-v', 'error', ...input, '-vf', filter, '-ss', at.toFixed(3), '-frames:v', '1', path.join(SCREENSHOTS, `${name}-${style}.png`)]);
  });
});
