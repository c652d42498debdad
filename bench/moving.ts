// Issue 24's moving pictures: a minute of narration at 1080×1920 with pop captions over a still image (the spliced
// path), the same image zooming or panning, and a progress bar: render time, size per minute, and PSNR against a slow
// x264 encode of the same frames.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Ffmpeg } from '../src/media/ffmpeg.js';
import { runProcess } from '../src/media/process.js';
import { resolveMediaTools } from '../src/media/tools.js';
import { BT709_VUI } from '../src/video/h264/index.js';
import { frameSize } from '../src/video/frame.js';
import { layoutCaptions } from '../src/video/layout.js';
import { renderVideo, type RenderOptions } from '../src/video/render.js';
import type { RawPipeline } from './raw.js';
import { round, timings, type Timings } from './stats.js';
import { narrationOf } from './texts.js';

export interface MovingRow {
  label: string;
  renderPath: string;
  time: Timings;
  /** p50 over the video's length: under 0.25 is the target for moving pictures. */
  realTime: number;
  megabytesPerMinute: number;
  /** Against the same frames through x264 `slow`, CRF 12; null for the still (spliced) video. */
  psnr: number | null;
}

export interface MovingResult {
  voice: string;
  seconds: number;
  rows: MovingRow[];
  /** p50 of four still scenes (cuts) with a title over p50 of the one still image, both pop captions: at most 1.5. */
  scenesRatio: number;
}

/** The row the scenes' video is compared with, and the scenes' own. */
export const STILL_LABEL = 'still image (spliced)';
const SCENES_LABEL = 'four still images (cuts) and a title';

const FPS = 30;
const REFERENCE_X264 = ['-c:v', 'libx264', '-preset', 'slow', '-crf', '12', '-bf', '0', '-x264-params', BT709_VUI];

export async function measureMoving(raw: RawPipeline, options: { voice: string; seconds: number; runs: number; workDir: string }): Promise<MovingResult> {
  const { voice, seconds, runs, workDir } = options;
  const text = narrationOf(seconds);
  const speech = await raw.speak(text, voice);
  const size = frameSize('1080p', '9:16');
  const captions = layoutCaptions({ text, speech, size, aspectRatio: '9:16', fps: FPS, look: { style: 'pop' } });
  const ffmpeg = new Ffmpeg(resolveMediaTools());
  const image = path.join(workDir, 'moving-background.jpg');
  await runProcess(ffmpeg.tools.ffmpeg, ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'mandelbrot=s=1920x1080', '-frames:v', '1', '-q:v', '3', image], { timeoutMs: 60_000 });
  const still = { type: 'image' as const, file: image };
  // Three more pictures as detailed as the first (other parts of the same set), each a quarter of the narration, and a title over the first 3 s.
  const scenes = await Promise.all(
    ['start_x=-0.75:start_y=0.1:start_scale=0.5', 'start_x=-1.3:start_y=0:start_scale=0.3', 'start_x=0.3:start_y=0.5:start_scale=0.8'].map(async (view, index) => {
      const file = path.join(workDir, `scene-${index + 1}.jpg`);
      await runProcess(ffmpeg.tools.ffmpeg, ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', `mandelbrot=s=1920x1080:${view}`, '-frames:v', '1', '-q:v', '3', file], { timeoutMs: 60_000 });
      return { background: { type: 'image' as const, file }, startFrame: Math.round(((index + 1) * captions.frames) / 4) };
    }),
  );
  // A clip as phones shoot them: 10 s of 1080×1920 H.264 at 30 fps in BT.709, tagged so, moving all over (looped
  // six times); taken as it is, as an upload found so would be (size, bt709 and length from its record).
  const clip = path.join(workDir, 'clip.mp4');
  await runProcess(
    ffmpeg.tools.ffmpeg,
    [
      '-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=s=1080x1920:r=30:d=10', '-vf', 'scale=out_color_matrix=bt709:out_range=tv',
      '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p', '-colorspace', 'bt709', '-color_primaries', 'bt709', '-color_trc', 'bt709', clip,
    ],
    { timeoutMs: 120_000 },
  );
  const titled = layoutCaptions({ text, speech, size, aspectRatio: '9:16', fps: FPS, look: { style: 'pop' }, title: { text: 'Four pictures, one story', seconds: 3 } });
  const variants: Array<{ label: string; options: Partial<RenderOptions>; ms: number[] }> = [
    { label: STILL_LABEL, options: { background: still }, ms: [] },
    { label: SCENES_LABEL, options: { background: still, scenes, captions: titled }, ms: [] },
    { label: 'image zooming in', options: { background: { ...still, motion: 'zoom-in' } }, ms: [] },
    { label: 'image panning', options: { background: { ...still, motion: 'pan' } }, ms: [] },
    { label: 'still image and a progress bar', options: { background: still, progressBar: { colour: 'FFD23F' } }, ms: [] },
    { label: 'a 10 s clip, looped', options: { background: { type: 'video', file: clip, size, bt709: true, seconds: 10 } }, ms: [] },
  ];
  const render = (options: Partial<RenderOptions>, output: string) =>
    renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate: 'constant', captions, output, ...options });
  const paths = new Map<string, string>();
  for (let run = 0; run < runs; run += 1) {
    for (const [index, variant] of variants.entries()) {
      const started = performance.now();
      const rendered = await render(variant.options, path.join(workDir, `moving-${index}.mp4`));
      variant.ms.push(performance.now() - started);
      paths.set(variant.label, rendered.renderPath);
    }
  }
  const rows: MovingRow[] = [];
  for (const [index, variant] of variants.entries()) {
    const file = path.join(workDir, `moving-${index}.mp4`);
    const time = timings(variant.ms);
    const renderPath = paths.get(variant.label) ?? '';
    let psnr: number | null = null;
    if (renderPath === 'moving') {
      const reference = path.join(workDir, `moving-${index}-reference.mp4`);
      await render({ ...variant.options, movingX264: REFERENCE_X264 }, reference);
      psnr = await averagePsnr(ffmpeg, file, reference);
    }
    const megabytesPerMinute = round((await stat(file)).size / 1e6 / (speech.duration / 60), 1);
    rows.push({ label: variant.label, renderPath, time, realTime: round(time.p50 / 1000 / speech.duration, 3), megabytesPerMinute, psnr });
    console.log(`  ${variant.label}: ${renderPath}, ${time.p50} ms (×${rows.at(-1)?.realTime} real time), ${megabytesPerMinute} MB/min, PSNR ${psnr ?? '–'} dB`);
  }
  const p50Of = (label: string) => rows.find((row) => row.label === label)?.time.p50 ?? Number.NaN;
  const scenesRatio = round(p50Of(SCENES_LABEL) / p50Of(STILL_LABEL), 2);
  console.log(`  four still scenes and a title: ×${scenesRatio} the single still image`);
  return { voice, seconds: round(speech.duration, 1), rows, scenesRatio };
}

/** ffmpeg's psnr filter over every frame of `file` against `reference`: the average over Y, U and V. */
async function averagePsnr(ffmpeg: Ffmpeg, file: string, reference: string): Promise<number> {
  const { stderr } = await runProcess(ffmpeg.tools.ffmpeg, ['-nostdin', '-i', file, '-i', reference, '-lavfi', 'psnr', '-f', 'null', '-'], { timeoutMs: 300_000 });
  const average = /average:([\d.]+|inf)/u.exec(stderr)?.[1];
  return average === undefined ? Number.NaN : average === 'inf' ? Infinity : round(Number(average), 1);
}
