/**
 * Narrated video, end to end (synthesis, layout, render, mux): 60 s of narration at 1080×1920 and 1280×720,
 * constant rate (default), variable rate, and the naive pipeline for comparison; medians of RUNS runs, plus
 * the peak resident memory of every ffmpeg child (`/usr/bin/time -f %M`).
 *
 *   node --import tsx bench/video.ts [runs]
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createEngines } from '../src/engines/index.js';
import { Ffmpeg } from '../src/ffmpeg.js';
import { resolveMediaTools } from '../src/media-tools.js';
import { Synthesizer } from '../src/synthesis.js';
import { LocalStorage } from '../src/storage.js';
import { encodeSpeech } from '../src/audio-encoding.js';
import { assScript } from '../src/video/ass.js';
import { FONTS_DIR } from '../src/video/font.js';
import { frameSize, layoutCaptions } from '../src/video/layout.js';
import type { AspectRatio, FrameRate } from '../src/schemas.js';
import { filterValue, renderVideo } from '../src/video/render.js';
import type { Speech } from '../src/pcm.js';

const RUNS = Number(process.argv[2] ?? 3);
const VOICE = 'espeak-ng:en-us';
const FPS = 30;
// About 60 s with eSpeak NG's default rate: 200 words in 13 sentences.
const TEXT = [
  'Every morning the harbour wakes before the town does.',
  'Fishing boats slide out past the lighthouse while the bakery on the corner starts its first batch of bread.',
  'By seven, the market stalls are open, and the smell of coffee drifts along the narrow streets.',
  'Visitors often ask why the houses are painted in such bright colours.',
  'The answer is simple: sailors wanted to find their homes from the sea, even in thick fog.',
  'Today the tradition continues, and every spring the whole street repaints together.',
  'In the afternoon the wind turns, the tide comes in, and children race along the sea wall.',
  'Old fishermen sit on the benches, mending nets and trading stories that grow a little taller each year.',
  'When the sun goes down, the lighthouse takes over again, sweeping its beam across the water.',
  'It is a small place, but people who visit once almost always come back.',
  'Some come for the food, some for the quiet, and some simply to watch the boats return at dusk.',
  'Next week we will follow one of the boats out to sea, from the first light until the catch comes in.',
  'Thank you for watching, and see you next time.',
].join(' ');

interface Case {
  name: string;
  aspectRatio: AspectRatio;
  resolution: '1080p' | '720p';
  mode: FrameRate | 'naive';
}

const CASES: Case[] = [
  { name: '1080×1920 constant', aspectRatio: '9:16', resolution: '1080p', mode: 'constant' },
  { name: '1080×1920 variable', aspectRatio: '9:16', resolution: '1080p', mode: 'variable' },
  { name: '1080×1920 naive', aspectRatio: '9:16', resolution: '1080p', mode: 'naive' },
  { name: '1280×720 constant', aspectRatio: '16:9', resolution: '720p', mode: 'constant' },
  { name: '1280×720 variable', aspectRatio: '16:9', resolution: '720p', mode: 'variable' },
];

async function main(): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'voxreel-bench-'));
  const peaks = path.join(work, 'peaks.txt');
  const wrapper = path.join(work, 'ffmpeg');
  await writeFile(wrapper, `#!/bin/sh\nexec /usr/bin/time -a -o ${JSON.stringify(peaks)} -f "%M" ${JSON.stringify(resolveMediaTools().ffmpeg)} "$@"\n`);
  await chmod(wrapper, 0o755);
  const tools = resolveMediaTools();
  const engines = await createEngines({ poolSize: 2, jobTimeoutMs: 60_000 });
  const storage = new LocalStorage(path.join(work, 'out'), 'http://localhost');
  await storage.init();
  try {
    for (const measureMemory of [false, true]) {
      const ffmpeg = new Ffmpeg(measureMemory ? { ...tools, ffmpeg: wrapper } : tools);
      const synthesizer = new Synthesizer(engines, ffmpeg, storage);
      await synthesizer.speak({ text: 'Warm up.', voice: VOICE });
      console.log(measureMemory ? '\npeak RSS of ffmpeg children (one run each)' : `wall time, end to end, median of ${RUNS}`);
      for (const testCase of CASES) {
        const times: number[] = [];
        let duration = 0;
        for (let run = 0; run < (measureMemory ? 1 : RUNS); run += 1) {
          await rm(peaks, { force: true });
          const output = path.join(work, `out-${run}.mp4`);
          const started = performance.now();
          const speech = await synthesizer.speak({ text: TEXT, voice: VOICE });
          duration = speech.duration;
          await (testCase.mode === 'naive' ? naive(ffmpeg, speech, testCase, output, work) : fast(ffmpeg, speech, testCase, output));
          times.push((performance.now() - started) / 1000);
        }
        if (measureMemory) {
          const kilobytes = (await readFile(peaks, 'utf8')).trim().split('\n').map(Number);
          console.log(`${testCase.name.padEnd(22)} ${kilobytes.map((kb) => `${Math.round(kb / 1024)} MB`).join(' + ')}`);
        } else {
          times.sort((a, b) => a - b);
          const median = times[Math.floor(times.length / 2)] as number;
          console.log(`${testCase.name.padEnd(22)} ${median.toFixed(2)} s  (${duration.toFixed(1)} s of narration, runs ${times.map((t) => t.toFixed(2)).join(' ')})`);
        }
      }
    }
    const ffmpeg = new Ffmpeg(tools);
    const started = performance.now();
    await new Synthesizer(engines, ffmpeg, storage).speak({ text: TEXT, voice: VOICE });
    console.log(`\nsynthesis alone: ${((performance.now() - started) / 1000).toFixed(2)} s`);
  } finally {
    await engines.close();
    await rm(work, { recursive: true, force: true });
  }
}

function fast(ffmpeg: Ffmpeg, speech: Speech, testCase: Case, output: string): Promise<void> {
  const size = frameSize(testCase.resolution, testCase.aspectRatio);
  const captions = layoutCaptions({ text: TEXT, speech, size, aspectRatio: testCase.aspectRatio, fps: FPS });
  return renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate: testCase.mode as FrameRate, captions, output, timeoutMs: 120_000 });
}

/** VIDEO-NOTES' naive pipeline: a full-rate colour source, the `subtitles` filter and preset medium. */
async function naive(ffmpeg: Ffmpeg, speech: Speech, testCase: Case, output: string, work: string): Promise<void> {
  const size = frameSize(testCase.resolution, testCase.aspectRatio);
  const captions = layoutCaptions({ text: TEXT, speech, size, aspectRatio: testCase.aspectRatio, fps: FPS });
  const script = path.join(work, 'naive.ass');
  const audio = path.join(work, 'naive.m4a');
  await writeFile(script, assScript(captions));
  await encodeSpeech(ffmpeg, speech, { encoding: 'aac', speed: 1, output: audio });
  await ffmpeg.run({
    inputs: [
      { source: `color=c=black:s=${size.width}x${size.height}:r=${FPS}:d=${speech.duration}`, options: ['-f', 'lavfi'] },
      { source: audio },
    ],
    complexFilter: `[0:v]subtitles=filename=${filterValue(script)}:fontsdir=${filterValue(FONTS_DIR)}[v]`,
    output,
    outputOptions: ['-map', '[v]', '-map', '1:a', '-c:v', 'libx264', '-preset', 'medium', '-pix_fmt', 'yuv420p', '-c:a', 'copy', '-movflags', '+faststart', '-f', 'mp4'],
  });
}

await main();
