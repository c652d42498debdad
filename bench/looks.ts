import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Ffmpeg } from '../src/media/ffmpeg.js';
import { runProcess } from '../src/media/process.js';
import { resolveMediaTools } from '../src/media/tools.js';
import { frameSize } from '../src/video/frame.js';
import { layoutCaptions } from '../src/video/layout.js';
import { renderVideo, type RenderOptions } from '../src/video/render.js';
import type { RawPipeline } from './raw.js';
import { postOk, type Service } from './service.js';
import { median, round, timings, type Timings } from './stats.js';
import { narrationOf } from './texts.js';

/** A render of one minute of narration at 1080×1920, constant rate, under one of the settings compared. */
export interface RenderVariant {
  label: string;
  time: Timings;
}

export interface LooksResult {
  voice: string;
  /** Narration length in seconds. */
  seconds: number;
  /**
   * renderVideo alone on the same speech and captions (no synthesis, no HTTP): as before issue 12 (one keyframe, the
   * voice's own level), with keyframes every 2 s only, and as now by default (keyframes and -14 LUFS at 48 kHz).
   */
  renders: RenderVariant[];
  /** Keyframes every 2 s against one keyframe, render p50s. */
  keyframeCost: number;
  /**
   * POST /tts-video end to end: the plain default, an uploaded image background + `bold` captions + uploaded music
   * (stereo, the default with music) and the same in mono, and a Chinese narration of about the same length
   * (`chineseVoice`, words cut by Intl.Segmenter: more words and caption changes than English).
   */
  service: { plain: Timings; looks: Timings; looksMono: Timings; chinese: Timings };
  chineseVoice: string;
  /** The Chinese narration's length, seconds; the English one's is `seconds`. */
  chineseSeconds: number;
  /** Chinese over English (plain), p50s per second of video (the two narrations differ a little in length). */
  chineseRatio: number;
}

const CHINESE_VOICE = 'espeak-ng:cmn';
const CHINESE_PARAGRAPH =
  '每天早上，港口总是比城镇更早醒来。渔船驶过灯塔，街角的面包店开始烤第一批面包。到了七点，市场的摊位都开张了，咖啡的香味飘过狭窄的街道。' +
  '游客们慢慢地走向海边，孩子们在广场上追逐鸽子，一天就这样开始了。';

const FPS = 30;

/**
 * Issue 12's costs, in rounds so that noise falls on every variant alike: the renderer on one minute of speech with
 * and without keyframes and loudness, then the service with every look at once against its plain video.
 */
export async function measureLooks(service: Service, raw: RawPipeline, options: { voice: string; seconds: number; runs: number; workDir: string }): Promise<LooksResult> {
  const { voice, seconds, runs, workDir } = options;
  const text = narrationOf(seconds);
  const speech = await raw.speak(text, voice);
  const size = frameSize('1080p', '9:16');
  const captions = layoutCaptions({ text, speech, size, aspectRatio: '9:16', fps: FPS });
  const ffmpeg = new Ffmpeg(resolveMediaTools());
  const variants: Array<{ label: string; options: Partial<RenderOptions>; ms: number[] }> = [
    { label: 'one keyframe, voice level (before issue 12)', options: { keyframeSeconds: 1e9, loudness: null }, ms: [] },
    { label: 'keyframes every 2 s, voice level', options: { loudness: null }, ms: [] },
    { label: 'keyframes every 2 s, -14 LUFS at 48 kHz (the default)', options: {}, ms: [] },
  ];
  const image = path.join(workDir, 'background.jpg');
  const music = path.join(workDir, 'music.mp3');
  await makeAssets(ffmpeg, image, music);
  const [imageId, musicId] = await Promise.all([upload(service, image, 'image/jpeg'), upload(service, music, 'audio/mpeg')]);
  const request = { text, voice, resolution: '1080p', aspect_ratio: '9:16' };
  const looks = { ...request, background: { image: imageId }, caption_style: 'bold', music: { id: musicId } };
  const looksMono = { ...looks, channels: 1 };
  const chineseText = await chineseNarration(service, speech.duration);
  const chinese = { ...request, text: chineseText, voice: CHINESE_VOICE };
  const serviceMs = { plain: [] as number[], looks: [] as number[], looksMono: [] as number[], chinese: [] as number[] };
  let chineseSeconds = 0;
  // One of each first, untimed.
  await postOk(`${service.baseUrl}/tts-video`, looks);
  for (let round = 0; round < runs; round += 1) {
    for (const variant of variants) {
      const started = performance.now();
      await renderVideo(ffmpeg, { speech, size, fps: FPS, frameRate: 'constant', captions, output: path.join(workDir, 'looks.mp4'), ...variant.options });
      variant.ms.push(performance.now() - started);
    }
    serviceMs.plain.push((await postOk(`${service.baseUrl}/tts-video`, request)).ms);
    serviceMs.looks.push((await postOk(`${service.baseUrl}/tts-video`, looks)).ms);
    serviceMs.looksMono.push((await postOk(`${service.baseUrl}/tts-video`, looksMono)).ms);
    const chineseAnswer = await postOk<{ duration: number }>(`${service.baseUrl}/tts-video`, chinese);
    serviceMs.chinese.push(chineseAnswer.ms);
    chineseSeconds = chineseAnswer.body.duration;
  }
  const renders = variants.map((variant) => ({ label: variant.label, time: timings(variant.ms) }));
  for (const render of renders) console.log(`  render ${render.label}: ${render.time.p50} ms`);
  const [before, withKeyframes] = renders;
  const result = {
    voice,
    seconds: round(speech.duration, 1),
    renders,
    keyframeCost: round((withKeyframes?.time.p50 ?? Number.NaN) / (before?.time.p50 ?? Number.NaN), 2),
    service: { plain: timings(serviceMs.plain), looks: timings(serviceMs.looks), looksMono: timings(serviceMs.looksMono), chinese: timings(serviceMs.chinese) },
    chineseVoice: CHINESE_VOICE,
    chineseSeconds: round(chineseSeconds, 1),
    chineseRatio: round(median(serviceMs.chinese) / chineseSeconds / (median(serviceMs.plain) / speech.duration), 2),
  };
  console.log(
    `  keyframes cost ×${result.keyframeCost}; /tts-video plain ${result.service.plain.p50} ms, image + bold + music ${result.service.looks.p50} ms ` +
      `(mono ${result.service.looksMono.p50} ms), Chinese ${result.chineseSeconds} s ${result.service.chinese.p50} ms (×${result.chineseRatio})`,
  );
  return result;
}

/**
 * The Chinese paragraph's sentences, over and over, to about `seconds` of speech (its length measured once through
 * /tts, spread over its characters): whole sentences, the English narration's length within about half a sentence
 * (some 3 s), so that the two are compared at one length (whole paragraphs made 48 s against 62 s, and a video's
 * fixed costs weigh more per second of a shorter one).
 */
async function chineseNarration(service: Service, seconds: number): Promise<string> {
  const once = await postOk<{ duration: number }>(`${service.baseUrl}/tts`, { text: CHINESE_PARAGRAPH, voice: CHINESE_VOICE, format: 'wav' });
  const sentences = CHINESE_PARAGRAPH.match(/[^。]+。/gu) ?? [CHINESE_PARAGRAPH];
  const characters = (CHINESE_PARAGRAPH.length * seconds) / once.body.duration;
  let text = '';
  for (let index = 0; ; index += 1) {
    const sentence = sentences[index % sentences.length] as string;
    if (text && text.length + sentence.length / 2 > characters) return text;
    text += sentence;
  }
}

/** A photo-like 1920×1080 JPEG and a minute of stereo MP3, made here. */
export async function makeAssets(ffmpeg: Ffmpeg, image: string, music: string): Promise<void> {
  const run = (args: string[]) => runProcess(ffmpeg.tools.ffmpeg, ['-nostdin', '-v', 'error', '-y', ...args], { timeoutMs: 60_000 });
  await run(['-f', 'lavfi', '-i', 'mandelbrot=s=1920x1080', '-frames:v', '1', '-q:v', '3', image]);
  await run(['-f', 'lavfi', '-i', 'sine=f=220:d=60', '-f', 'lavfi', '-i', 'sine=f=330:d=60', '-filter_complex', 'amix=inputs=2', '-ac', '2', '-b:a', '128k', music]);
}

export async function upload(service: Service, file: string, type: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([await readFile(file)], { type }), path.basename(file));
  const response = await fetch(`${service.baseUrl}/assets`, { method: 'POST', body: form });
  if (response.status !== 201) throw new Error(`POST /assets answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}
