import type { WordTiming } from '../src/engines/types.js';
import type { Speech } from '../src/speech/pcm.js';
import { Ffmpeg } from '../src/media/ffmpeg.js';
import { resolveMediaTools } from '../src/media/tools.js';
import { runProcess } from '../src/media/process.js';

/** Strings that mean something to ASS, to ffmpeg's filter graph or drawtext, or to WebVTT. */
export const INJECTIONS = [
  '{\\an8}{\\fs200}{\\c&H0000FF&}big',
  '{\\p1}m 0 0 l 100 0 100 100{\\p0}',
  'C:\\new\\Net\\h\\N',
  '\\{not a tag\\}',
  'back\\',
  '\\\\N',
  '%{pts}',
  '%{eif\\:n\\:d}',
  "'single'",
  '"double"',
  'a:b;c,d',
  '[0:v][out]',
  'text=x:fontfile=/etc/passwd',
  '-->',
  '<b>bold</b>',
  '&amp;',
  '<00:00:01.000>',
];

/** Its own Ffmpeg rather than helpers.ts's, so render tests need neither the app nor the engines. */
export const ffmpeg = new Ffmpeg(resolveMediaTools());

/**
 * Speech without an engine: a tone burst per word of `text`, with the word timings an engine would report,
 * so layout and render tests do not depend on the engines.
 */
export function toneSpeech(text: string, options: { wordSeconds?: number; gapSeconds?: number; sampleRate?: number } = {}): Speech {
  const { wordSeconds = 0.3, gapSeconds = 0.08, sampleRate = 22050 } = options;
  const words: WordTiming[] = [];
  let time = 0.05;
  for (const match of text.matchAll(/\S+/g)) {
    words.push({ word: match[0], start: time, end: time + wordSeconds, textOffset: match.index, textLength: match[0].length });
    time += wordSeconds + gapSeconds;
  }
  const samples = new Int16Array(Math.round((time + 0.05) * sampleRate));
  for (const word of words) {
    for (let i = Math.round(word.start * sampleRate); i < Math.round(word.end * sampleRate); i += 1) {
      samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / sampleRate));
    }
  }
  const first = words[0];
  const last = words.at(-1);
  return {
    samples,
    sampleRate,
    duration: samples.length / sampleRate,
    sentences: first && last ? [{ start: first.start, end: last.end, textOffset: 0, textLength: text.length }] : [],
    words,
  };
}

/** One decoded frame as RGB24, taken at frame `index` of the video decoded at a constant `fps`. */
export async function decodeFrame(file: string, index: number, fps: number): Promise<Buffer> {
  const { stdout } = await runProcess(
    ffmpeg.tools.ffmpeg,
    ['-v', 'error', '-nostdin', '-i', file, '-vf', `fps=${fps},select=eq(n\\,${index})`, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    { timeoutMs: 30_000 },
  );
  return stdout;
}

/** MD5 of every frame decoded at a constant `fps`, in order. */
export async function frameHashes(file: string, fps: number): Promise<string[]> {
  const { stdout } = await runProcess(
    ffmpeg.tools.ffmpeg,
    ['-v', 'error', '-nostdin', '-i', file, '-map', '0:v:0', '-vf', `fps=${fps}`, '-f', 'framemd5', 'pipe:1'],
    { timeoutMs: 60_000 },
  );
  return stdout
    .toString('utf8')
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split(',').at(-1)?.trim() ?? '');
}

export interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** Caption pixels (bright on the dark background) of an RGB24 frame: how many, and their bounding box. */
export function captionPixels(frame: Buffer, width: number): { count: number; box: Box | undefined } {
  let count = 0;
  let box: Box | undefined;
  for (let offset = 0; offset + 2 < frame.length; offset += 3) {
    if (Math.max(frame[offset] as number, frame[offset + 1] as number, frame[offset + 2] as number) < 128) continue;
    count += 1;
    const x = (offset / 3) % width;
    const y = Math.floor(offset / 3 / width);
    box = box
      ? { left: Math.min(box.left, x), top: Math.min(box.top, y), right: Math.max(box.right, x), bottom: Math.max(box.bottom, y) }
      : { left: x, top: y, right: x, bottom: y };
  }
  return { count, box };
}

/** ffprobe's own stream fields (sample aspect ratio, frame rates, frame counts) that MediaInfo leaves out. */
export async function rawStreams(file: string): Promise<Array<Record<string, string | number | undefined>>> {
  const { stdout } = await runProcess(ffmpeg.tools.ffprobe, ['-v', 'error', '-print_format', 'json', '-show_streams', file], { timeoutMs: 30_000 });
  return (JSON.parse(stdout.toString('utf8')) as { streams: Array<Record<string, string | number | undefined>> }).streams;
}
