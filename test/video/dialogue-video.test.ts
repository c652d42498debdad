import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TtsVideoResponse } from '../../src/api/video.js';
import { useTestApp } from '../helpers/helpers.js';
import { decodeFrame } from '../helpers/media.js';

const FPS = 30;
// Three speakers of three engines (and sample rates).
const SEGMENTS = [
  { voice: 'piper:en_US-joe-medium', text: 'Did you hear the storm last night? The wind was howling.' },
  { voice: 'kokoro:af_heart', text: 'I did. It kept me awake for hours and hours.' },
  { voice: 'flite:slt', text: 'Me too! The whole house was shaking all night.' },
];
const GREEN = [0x30, 0xff, 0x30] as const;
/** What the third speaker gets unasked: the palette's second colour (speakers.ts). */
const PINK = [0xff, 0x9e, 0xc4] as const;
const WHITE = [0xff, 0xff, 0xff] as const;

/** Pixels of an RGB24 frame within `tolerance` of `colour` on every channel. */
function pixelsNear(frame: Buffer, colour: readonly [number, number, number], tolerance = 40): number {
  let count = 0;
  for (let offset = 0; offset + 2 < frame.length; offset += 3) {
    if (Math.abs((frame[offset] as number) - colour[0]) <= tolerance && Math.abs((frame[offset + 1] as number) - colour[1]) <= tolerance && Math.abs((frame[offset + 2] as number) - colour[2]) <= tolerance) count += 1;
  }
  return count;
}

interface Cue {
  start: number;
  end: number;
  voice: string | undefined;
}

function cuesOf(vtt: string): Cue[] {
  const seconds = (time: string) => time.split(':').reduce((sum, part) => sum * 60 + Number(part), 0);
  return vtt
    .split('\n\n')
    .filter((block) => block.includes('-->'))
    .map((block) => {
      const [timing = '', ...lines] = block.split('\n');
      const [start = '', end = ''] = timing.split(' --> ');
      return { start: seconds(start), end: seconds(end), voice: /^<v ([^>]+)>/u.exec(lines.join(' '))?.[1] };
    });
}

describe('a dialogue video', () => {
  const t = useTestApp();

  it('draws each speaker\'s captions in its colour (asked for, or its own from the palette) and names them in WebVTT', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/tts-video',
      payload: { segments: SEGMENTS, resolution: '720p', aspect_ratio: '9:16', caption_style: 'subtitle', speakers: { Heart: { caption_color: '#30FF30' } } },
    });
    expect(response.statusCode, response.body).toBe(200);
    const answer = response.json<TtsVideoResponse>();
    const file = path.join(t.outputDir, 'video', path.basename(answer.url));
    const cues = cuesOf((await t.fetchFile(answer.captionsUrl)).body.toString('utf8'));
    expect([...new Set(cues.map((cue) => cue.voice))]).toEqual(['Joe', 'Heart', 'SLT']);
    // Cues follow the turns: all of one speaker's, then the next's.
    expect(cues.map((cue) => cue.voice)).toEqual([...cues.map((cue) => cue.voice)].sort((a, b) => ['Joe', 'Heart', 'SLT'].indexOf(a as string) - ['Joe', 'Heart', 'SLT'].indexOf(b as string)));
    const frameOf = async (voice: string) => {
      const cue = cues.find((one) => one.voice === voice);
      if (!cue) throw new Error(`no cue of ${voice}`);
      return decodeFrame(file, Math.round(((cue.start + cue.end) / 2) * FPS), FPS);
    };
    const [joe, heart, slt] = [await frameOf('Joe'), await frameOf('Heart'), await frameOf('SLT')];
    // Joe: the captions' own white; Heart: the green asked for; SLT: pink, unasked. None in another's colour.
    expect(pixelsNear(joe, WHITE), 'Joe in white').toBeGreaterThan(500);
    expect(pixelsNear(heart, GREEN), 'Heart in green').toBeGreaterThan(500);
    expect(pixelsNear(slt, PINK), 'SLT in pink').toBeGreaterThan(500);
    for (const [name, frame] of [['Joe', joe], ['SLT', slt]] as const) expect(pixelsNear(frame, GREEN), `${name}: no green`).toBeLessThan(20);
    for (const [name, frame] of [['Joe', joe], ['Heart', heart]] as const) expect(pixelsNear(frame, PINK), `${name}: no pink`).toBeLessThan(20);
    expect(pixelsNear(heart, WHITE, 20), 'Heart: no white text').toBeLessThan(50);
  }, 180_000);
});
