import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assScript } from '../../src/video/ass.js';
import { frameSize } from '../../src/video/frame.js';
import { fontsDirFor } from '../../src/video/font.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { filterValue } from '../../src/video/render.js';
import { runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { toneSpeech } from '../helpers/video-helpers.js';

const SIZE = frameSize('720p', '16:9');
const BACKGROUND = [0x3a, 0x8a, 0x2a] as const;
const work = useTempDir('voxreel-boxes-');

/** The subtitle style's first cue on a green frame (RGB24), and its number of lines. */
async function firstCue(text: string, name: string): Promise<{ frame: Buffer; lines: number }> {
  const captions = layoutCaptions({ text, speech: toneSpeech(text, { wordSeconds: 0.3 }), size: SIZE, aspectRatio: '16:9', fps: 30, look: { style: 'subtitle' } });
  const file = path.join(work, `${name}.ass`);
  await writeFile(file, assScript(captions));
  const colour = BACKGROUND.map((value) => value.toString(16).padStart(2, '0')).join('');
  const filter = `ass=filename=${filterValue(file)}:fontsdir=${filterValue(fontsDirFor(file))}:shaping=complex`;
  const { stdout } = await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', `color=0x${colour}:s=${SIZE.width}x${SIZE.height}:d=1:r=30`, '-vf', filter, '-ss', '0.1', '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
  return { frame: stdout, lines: captions.cues[0]?.lines.length ?? 0 };
}

/** Per row of the frame: the leftmost and rightmost pixel that is not the background (box or text), if any. */
function rowSpans(frame: Buffer): Array<{ row: number; left: number; right: number }> {
  const spans: Array<{ row: number; left: number; right: number }> = [];
  for (let row = 0; row < SIZE.height; row += 1) {
    let left = -1;
    let right = -1;
    for (let column = 0; column < SIZE.width; column += 1) {
      const at = (row * SIZE.width + column) * 3;
      const off = BACKGROUND.some((value, channel) => Math.abs((frame[at + channel] as number) - value) > 12);
      if (!off) continue;
      if (left < 0) left = column;
      right = column;
    }
    if (left >= 0) spans.push({ row, left, right });
  }
  return spans;
}

describe('subtitle style boxes', () => {
  it.each([
    ['english', 'Every morning the harbour wakes before the town does, and the boats go out past the lighthouse.'],
    ['korean-mixed', '오늘의 추천 메뉴는 Korean BBQ 입니다. 그리고 또 다른 메뉴도 있습니다 정말 맛있어요'],
    ['thai', 'ทุกเช้าท่าเรือตื่นขึ้นก่อนเมือง เรือประมงแล่นผ่านประภาคาร ร้านเบเกอรี่ตรงหัวมุมเริ่มอบขนมปังชุดแรก'],
    ['arabic', 'مرحبا بكم في قناتنا، اليوم نتحدث عن القهوة والشاي والحياة في المدينة القديمة.'],
  ])('%s: one clean rectangle per line, edge to edge, of one darkness', async (name, text) => {
    const { frame, lines } = await firstCue(text, name);
    expect(lines).toBe(2);
    const spans = rowSpans(frame);
    // Rows from the top of the first box to the bottom of the last, none missing: the boxes touch, no gap, no overlap strip.
    const rows = spans.map((span) => span.row);
    expect(rows.at(-1)! - rows[0]! + 1).toBe(rows.length);
    // Each row spans a box's full width: exactly two widths (one per line), each over a block of rows, so no notch.
    const widths = [...new Set(spans.map((span) => span.right - span.left))];
    expect(widths).toHaveLength(2);
    const changes = spans.filter((span, index) => index > 0 && span.right - span.left !== spans[index - 1]!.right - spans[index - 1]!.left);
    expect(changes).toHaveLength(1);
    // One darkness: the box's pixels at its left edge (no text there) are the same in every row of both lines.
    const edge = spans.map((span) => frame[(span.row * SIZE.width + span.left + 2) * 3 + 1] as number);
    expect(Math.max(...edge) - Math.min(...edge)).toBeLessThanOrEqual(3);
  });
});
