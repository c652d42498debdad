// Issue 40: long jobs. A 100,000-character text by job with Piper (speed, the memory of the whole process tree above
// rest, progress that never falls); the same job on two workers sharing Redis and a folder, one killed part way and
// the job finished by the other (the same bytes as the uninterrupted run); a 15-minute 1080×1920 video by job.
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { aliceChapters } from '../test/helpers/fixtures.js';
import { runFfmpeg } from '../test/helpers/media.js';
import { startRedis } from '../test/helpers/redis-server.js';
import { descendants, residentKb } from './memory.js';
import { postOk, startService, startWorkerService, type Service } from './service.js';
import { round } from './stats.js';

export const LONG_FORM_VOICE = 'piper:en_US-joe-medium';

export interface LongFormPlan {
  /** Characters of the long /tts job (Alice's first chapters, cut at a sentence). */
  characters: number;
  /** Characters of the long video (about 18 a second with Piper's joe). */
  videoCharacters: number;
  /** Share of the text spoken when a worker is killed. */
  killAt: number;
}

interface TreeMemory {
  restMb: number;
  peakMb: number;
  aboveRestMb: number;
}

export interface LongJobRun {
  characters: number;
  audioSeconds: number;
  wallSeconds: number;
  /** Seconds of audio per second of wall time. */
  realTime: number;
  memory: TreeMemory;
  polls: number;
  /** charactersDone and progress never fell from one poll to the next. */
  progressMonotonic: boolean;
  md5: string;
}

export interface TakeoverRun {
  measured: true;
  /** charactersDone / characters when the worker was killed. */
  killedAt: number;
  /** Sentences the surviving worker read back from the checkpoints. */
  resumedSentences: number;
  wallSeconds: number;
  progressMonotonic: boolean;
  /** The same MD5 as the uninterrupted run's file. */
  identical: boolean;
}

export interface LongVideoRun {
  characters: number;
  videoSeconds: number;
  wallSeconds: number;
  realTime: number;
  width: number;
  height: number;
  memory: TreeMemory;
  /** Chapters of the text (Markdown headings), and of those, the ones whose card and captions a decoded frame shows a second after they start. */
  chapters?: number;
  cardsSeen?: number;
  captionsSeen?: number;
}

export interface LongFormResult {
  voice: string;
  audio: LongJobRun;
  takeover: TakeoverRun | { measured: false; reason: string };
  video: LongVideoRun;
}

interface JobView {
  state: string;
  progress?: number;
  characters?: number;
  charactersDone?: number;
  result?: { url: string; duration: number; width?: number; height?: number; chapters?: Array<{ title: string; start: number; end: number }> };
  error?: { code: string; message: string };
}

export async function measureLongForm(plan: LongFormPlan, log: (line: string) => void): Promise<LongFormResult> {
  const text = await aliceChapters(plan.characters);
  const service = await startService({ WARM_VOICE: LONG_FORM_VOICE });
  let audio: LongJobRun;
  let video: LongVideoRun;
  try {
    // At rest: the start-up voice loaded and used once, nothing running.
    await postOk(`${service.baseUrl}/tts`, { text: 'Ready when you are.', voice: LONG_FORM_VOICE });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    audio = await longAudio(service, text);
    log(`${text.length} characters: ${round(audio.audioSeconds / 60, 1)} min of audio in ${audio.wallSeconds} s (${audio.realTime}× real time), tree ${audio.memory.aboveRestMb} MB above rest`);
    video = await longVideo(service, await aliceChapters(plan.videoCharacters));
    log(`video ${video.width}×${video.height}: ${round(video.videoSeconds / 60, 1)} min in ${video.wallSeconds} s (${video.realTime}× real time), tree ${video.memory.aboveRestMb} MB above rest; chapter cards seen ${video.cardsSeen} of ${video.chapters}, captions ${video.captionsSeen}`);
  } finally {
    await service.stop();
  }
  const takeover = await takeoverRun(text, plan.killAt, audio.md5).catch((error: unknown) => ({ measured: false as const, reason: String(error) }));
  log(takeover.measured ? `takeover at ${Math.round(takeover.killedAt * 100)} %: ${takeover.resumedSentences} sentences read back, identical: ${takeover.identical}` : `takeover not measured: ${takeover.reason}`);
  return { voice: LONG_FORM_VOICE, audio, takeover, video };
}

/** A job on `service` from its submission to its success: its result, views, wall time and the tree's memory meanwhile. */
async function timedJob(service: Service, route: string, body: Record<string, unknown>) {
  const memory = treeMemory(service.pid);
  const started = performance.now();
  const { id } = await submit(service.baseUrl, route, { ...body, voice: LONG_FORM_VOICE, async: true });
  const { final, views } = await follow(service.baseUrl, id, 1000);
  const wallSeconds = (performance.now() - started) / 1000;
  const tree = memory.stop();
  const result = succeeded(final);
  return { result, views, tree, wallSeconds: round(wallSeconds, 1), realTime: round(result.duration / wallSeconds, 1) };
}

/** The long /tts job on a fresh service. */
async function longAudio(service: Service, text: string): Promise<LongJobRun> {
  const { result, views, tree, wallSeconds, realTime } = await timedJob(service, '/tts', { text, format: 'mp3' });
  return {
    characters: text.length,
    audioSeconds: result.duration,
    wallSeconds,
    realTime,
    memory: tree,
    polls: views.length,
    progressMonotonic: monotonic(views),
    md5: await md5Of(service.baseUrl, result.url),
  };
}

/** A long /tts-video job, 1080×1920, on the same service. */
async function longVideo(service: Service, text: string): Promise<LongVideoRun> {
  const { result, tree, wallSeconds, realTime } = await timedJob(service, '/tts-video', { text, resolution: '1080p', aspect_ratio: '9:16' });
  const width = result.width ?? 0;
  const height = result.height ?? 0;
  const seen = await framesSeen(service.baseUrl, result.url, result.chapters ?? [], { width, height });
  return { characters: text.length, videoSeconds: result.duration, wallSeconds, realTime, width, height, memory: tree, chapters: result.chapters?.length ?? 0, ...seen };
}

/**
 * The chapters whose card (bright pixels in the top third, where only titles are drawn) and captions (in the lower
 * half) a frame decoded a second after each chapter's start shows.
 */
async function framesSeen(baseUrl: string, url: string, chapters: ReadonlyArray<{ start: number }>, size: { width: number; height: number }): Promise<{ cardsSeen: number; captionsSeen: number }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'voxreel-long-video-'));
  try {
    const file = path.join(dir, 'video.mp4');
    const response = await fetch(`${baseUrl}${new URL(url).pathname}`);
    await writeFile(file, Buffer.from(await response.arrayBuffer()));
    let cardsSeen = 0;
    let captionsSeen = 0;
    for (const chapter of chapters) {
      const { stdout } = await runFfmpeg(['-v', 'error', '-ss', String(chapter.start + 1), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1']);
      const bright = (from: number, to: number) => stdout.subarray(Math.round(from * size.height) * size.width, Math.round(to * size.height) * size.width).filter((value) => value > 200).length;
      if (bright(0, 1 / 3) > 500) cardsSeen += 1;
      if (bright(0.5, 0.95) > 500) captionsSeen += 1;
    }
    return { cardsSeen, captionsSeen };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The same job on an API process and two workers sharing one Redis and one OUTPUT_DIR; the worker running it is
 * killed (SIGKILL) once `killAt` of the text is spoken, and the other finishes it from the checkpoints.
 */
async function takeoverRun(text: string, killAt: number, expectedMd5: string): Promise<TakeoverRun> {
  const redis = await startRedis();
  const outputDir = await mkdtemp(path.join(os.tmpdir(), 'voxreel-bench-takeover-'));
  // CONCURRENCY as the uninterrupted run's (the default): a neural voice's arithmetic follows its thread count.
  const env = { REDIS_URL: redis.url, QUEUE_NAME: 'bench-takeover', OUTPUT_DIR: outputDir, WARM_VOICE: LONG_FORM_VOICE };
  const processes: Service[] = [];
  try {
    const api = await startService(env);
    processes.push(api);
    // Workers publish into the shared folder, which the API process serves under /files.
    const workerEnv = { ...env, CDN_URL: `${api.baseUrl}/files` };
    for (let worker = 0; worker < 2; worker += 1) processes.push(await startWorkerService(workerEnv));
    const started = performance.now();
    const { id } = await submit(api.baseUrl, '/tts', { text, voice: LONG_FORM_VOICE, format: 'mp3', async: true });
    let view = await jobView(api.baseUrl, id);
    while (view.state === 'queued' || ((view.charactersDone ?? 0) < (view.characters ?? Infinity) * killAt && view.state === 'running')) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      view = await jobView(api.baseUrl, id);
    }
    if (view.state !== 'running') throw new Error(`the job was ${view.state} before it could be stopped`);
    const running = processes.slice(1).find((worker) => worker.logs.some((entry) => entry.msg === 'job started' && entry.job === id));
    if (!running) throw new Error('no worker logged the job');
    process.kill(running.pid, 'SIGKILL');
    const killedAt = (view.charactersDone ?? 0) / (view.characters ?? 1);
    const { final, views } = await follow(api.baseUrl, id, 1000);
    const result = succeeded(final);
    const survivor = processes.slice(1).find((worker) => worker !== running);
    const resumed = survivor?.logs.find((entry) => String(entry.msg).startsWith('job resumed') && entry.job === id);
    return {
      measured: true,
      killedAt: round(killedAt, 3),
      resumedSentences: Number(resumed?.sentences ?? 0),
      wallSeconds: round((performance.now() - started) / 1000, 1),
      progressMonotonic: monotonic([view, ...views]),
      identical: (await md5Of(api.baseUrl, result.url)) === expectedMd5,
    };
  } finally {
    await Promise.all(processes.map((service) => service.stop().catch(() => undefined)));
    await redis.stop();
    await rm(outputDir, { recursive: true, force: true });
  }
}

async function submit(baseUrl: string, route: string, body: Record<string, unknown>): Promise<{ id: string }> {
  const response = await fetch(`${baseUrl}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status !== 202) throw new Error(`${route}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { id: string };
}

async function jobView(baseUrl: string, id: string): Promise<JobView> {
  // A keep-alive connection the server closed as the poll went out (its event loop busy past the keep-alive timeout while it lays out a long video) is tried again.
  const response = await fetch(`${baseUrl}/jobs/${id}`).catch(() => fetch(`${baseUrl}/jobs/${id}`));
  if (response.status !== 200) throw new Error(`GET /jobs/${id}: ${response.status}`);
  return (await response.json()) as JobView;
}

/** Polls the job every `everyMs` until it ends; every view on the way. */
async function follow(baseUrl: string, id: string, everyMs: number): Promise<{ final: JobView; views: JobView[] }> {
  const views: JobView[] = [];
  for (;;) {
    const view = await jobView(baseUrl, id);
    if (view.state !== 'queued' && view.state !== 'running') return { final: view, views };
    views.push(view);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

function succeeded(view: JobView): NonNullable<JobView['result']> {
  if (view.state !== 'succeeded' || !view.result) throw new Error(`the job ${view.state}: ${view.error?.code ?? ''} ${view.error?.message ?? ''}`);
  return view.result;
}

/** Whether charactersDone and progress never fell between running views. */
function monotonic(views: readonly JobView[]): boolean {
  const running = views.filter((view) => view.state === 'running');
  return running.every((view, index) => {
    const before = running[index - 1];
    return !before || ((view.charactersDone ?? 0) >= (before.charactersDone ?? 0) && (view.progress ?? 0) >= (before.progress ?? 0));
  });
}

/** The MD5 of a published file, fetched from the process at `baseUrl` that serves OUTPUT_DIR. */
async function md5Of(baseUrl: string, url: string): Promise<string> {
  const response = await fetch(`${baseUrl}${new URL(url).pathname}`);
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status}`);
  return createHash('md5').update(Buffer.from(await response.arrayBuffer())).digest('hex');
}

/** The whole tree's resident memory (the service and every process under it) now, and its largest every 250 ms until stop(). */
function treeMemory(root: number): { stop(): TreeMemory } {
  const now = () => Math.round(((residentKb(root) ?? 0) + descendants(root).reduce((sum, child) => sum + child.rssKb, 0)) / 1024);
  const restMb = now();
  let peakMb = restMb;
  const timer = setInterval(() => (peakMb = Math.max(peakMb, now())), 250);
  return {
    stop: () => {
      clearInterval(timer);
      peakMb = Math.max(peakMb, now());
      return { restMb, peakMb, aboveRestMb: peakMb - restMb };
    },
  };
}
