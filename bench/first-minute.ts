import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { startRedis } from '../test/helpers/redis-server.js';
import { startServer, startWorker, type RunningServer } from '../test/helpers/server-process.js';
import { measureDockerImage, type DockerImageResult } from './docker-image.js';
import { Ffmpeg } from '../src/media/ffmpeg.js';
import { resolveMediaTools } from '../src/media/tools.js';
import { makeAssets, upload } from './looks.js';
import { descendants, type ChildKind } from './memory.js';
import { measurePiperAsUser, type PiperAsUser } from './piper-as-user.js';
import { comparePiper, installPiperTts, type PiperComparison } from './piper-compare.js';
import { RUNTIMES, runtimeEnv, type Runtime } from './runtimes.js';
import { CACHES_OFF, postOk, procStatusKb, startService, type Service } from './service.js';
import { round, timings, type Timings } from './stats.js';
import { textOf } from './texts.js';

/** The commit the issue measured "today" at: the short path's figures are compared with it, side by side. */
export const BASELINE_COMMIT = '973b6e4';
const ROOT = path.resolve(import.meta.dirname, '..');
const MB = 1024;

export interface FirstRequest {
  voice: string;
  /** The first request after /readyz said ready, and the median of the next ones (ms). */
  firstMs: number;
  warmMs: number;
  ratio: number;
}

export interface PathComparison {
  label: string;
  baseline: Timings;
  current: Timings;
  /** current / baseline, of the p50s. */
  ratio: number;
}

export interface FirstMinuteResult {
  /** From `npm start`'s command to its "ready" log line (listening), and to /readyz 200 (the start-up voice warm), on ONNX Runtime 1.32. */
  listeningMs: Timings;
  readyMs: Timings;
  /** The same starts, interleaved, on each ONNX Runtime. */
  readyByRuntime: Record<Runtime, Timings>;
  /** What /readyz named as the runtime in use, per runtime asked for. */
  runtimeNamed: Record<Runtime, string | null>;
  /** The idle tree (MB) after four requests to the start-up voice, in each start on ONNX Runtime 1.32. */
  idleTreeMb: number[];
  warmVoice: string | null;
  firstRequests: FirstRequest[];
  /** After a few requests to the start-up voice, at rest: each process's resident memory (MB), and the tree's. */
  idle: { treeMb: number; processes: Array<{ kind: ChildKind | 'API (node)'; rssMb: number }> };
  /** Largest VmHWM per kind after one request to each engine (MB). */
  peakMb: Partial<Record<ChildKind | 'API (node)', number>>;
  /** The short, long and video paths against BASELINE_COMMIT on this machine, interleaved. */
  paths: PathComparison[];
  /** Two APIs and two workers started at once while every core runs a busy loop. */
  underLoad: { seconds: number; ready: number; of: number };
  /** The Piper engine against PyPI's piper-tts on the same model and text, two sentences in flight on each side (bench/piper-compare.ts), per runtime. */
  piper: PiperComparison;
  piperNpm: PiperComparison;
  /** The service's /tts against piper-tts's synthesize_wav, as a user runs each (bench/piper-as-user.ts). */
  piperAsUser: PiperAsUser;
  /** The Docker image built from this checkout: size, start to ready. */
  docker: DockerImageResult;
}

const STARTUP_ENV = { ...CACHES_OFF, WARM_VOICE: 'auto' };

async function readyAfter(service: Service, started: number): Promise<number> {
  for (;;) {
    const response = await fetch(`${service.baseUrl}/readyz`).catch(() => undefined);
    if (response?.status === 200) return performance.now() - started;
    await response?.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function timedTts(service: Service, body: Record<string, unknown>): Promise<number> {
  const started = performance.now();
  await postOk(`${service.baseUrl}/tts`, body);
  return performance.now() - started;
}

async function treeRss(root: number): Promise<FirstMinuteResult['idle']> {
  const api = { kind: 'API (node)' as const, rssMb: Math.round(((await procStatusKb(root, 'VmRSS')) ?? 0) / MB) };
  const children = descendants(root).map((child) => ({ kind: child.kind, rssMb: Math.round(child.rssKb / MB) }));
  const processes = [api, ...children];
  return { treeMb: processes.reduce((sum, process) => sum + process.rssMb, 0), processes };
}

/** A checkout of BASELINE_COMMIT beside this one, sharing its packages and voices (made once, kept in the OS temp dir). */
async function baselineCheckout(): Promise<string> {
  const dir = path.join(ROOT, '..', `.voxreel-baseline-${BASELINE_COMMIT}`);
  if (!existsSync(dir)) {
    await promisify(execFile)('git', ['-C', ROOT, 'worktree', 'add', '--detach', '--force', dir, BASELINE_COMMIT]);
    await promisify(execFile)('ln', ['-s', path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules')]);
  }
  return dir;
}

async function comparePaths(voice: string, runs: number): Promise<PathComparison[]> {
  const cwd = await baselineCheckout();
  const env = { VOICES_DIR: path.join(ROOT, 'voices') };
  const baseline = await startService(env, { build: 'source', cwd });
  const current = await startService(env);
  // The looks section's video (issue 21: no slower than before it): its image and music uploaded to each service.
  const workDir = await mkdtemp(path.join(tmpdir(), 'voxreel-bench-paths-'));
  const [image, music] = [path.join(workDir, 'background.jpg'), path.join(workDir, 'music.mp3')];
  const assets = new Map<Service, { image: string; music: string }>();
  const looks = (service: Service) => ({
    text: textOf(1000),
    voice,
    aspect_ratio: '9:16',
    background: { image: assets.get(service)?.image },
    caption_style: 'bold',
    music: { id: assets.get(service)?.music },
  });
  const cases: Array<{ label: string; url: string; body: object | ((service: Service) => object); runs: number }> = [
    { label: '/tts 200 characters, mp3', url: '/tts', body: { text: textOf(200), voice, format: 'mp3' }, runs },
    { label: '/tts 200 characters, wav', url: '/tts', body: { text: textOf(200), voice, format: 'wav' }, runs },
    { label: '/tts 200 characters, ogg', url: '/tts', body: { text: textOf(200), voice, format: 'ogg' }, runs },
    { label: '/tts 5000 characters, mp3', url: '/tts', body: { text: textOf(5000), voice, format: 'mp3' }, runs: Math.ceil(runs / 3) },
    { label: '/tts-video 1000 characters, 1080×1920', url: '/tts-video', body: { text: textOf(1000), voice, aspect_ratio: '9:16' }, runs: Math.ceil(runs / 3) },
    // Stereo now (the default with music since issue 21), mono then.
    { label: '/tts-video 1000 characters, 1080×1920, image background + bold captions + music', url: '/tts-video', body: looks, runs: Math.ceil(runs / 3) },
  ];
  try {
    await makeAssets(new Ffmpeg(resolveMediaTools()), image, music);
    for (const service of [baseline, current]) assets.set(service, { image: await upload(service, image, 'image/jpeg'), music: await upload(service, music, 'audio/mpeg') });
    const rows: PathComparison[] = [];
    for (const row of cases) {
      const times: Record<'baseline' | 'current', number[]> = { baseline: [], current: [] };
      // Two untimed rounds first: nothing timed pays for first use.
      for (let run = -2; run < row.runs; run += 1) {
        for (const [name, service] of [['baseline', baseline], ['current', current]] as const) {
          const started = performance.now();
          await postOk(`${service.baseUrl}${row.url}`, typeof row.body === 'function' ? row.body(service) : row.body);
          if (run >= 0) times[name].push(performance.now() - started);
        }
      }
      const [before, after] = [timings(times.baseline), timings(times.current)];
      rows.push({ label: row.label, baseline: before, current: after, ratio: round(after.p50 / before.p50, 2) });
      console.log(`  ${row.label}: ${after.p50} ms, ${BASELINE_COMMIT} ${before.p50} ms (×${round(after.p50 / before.p50, 2)})`);
    }
    return rows;
  } finally {
    await Promise.all([baseline.stop(), current.stop(), rm(workDir, { recursive: true, force: true })]);
  }
}

async function startUnderLoad(): Promise<FirstMinuteResult['underLoad']> {
  const redis = await startRedis();
  const hog: ChildProcess[] = cpus().map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  const env = { REDIS_URL: redis.url, QUEUE_NAME: 'bench-first-minute', CDN_URL: 'http://127.0.0.1:9/files', WARM_VOICE: 'auto' };
  const started = performance.now();
  const options = { build: 'compiled' as const, timeoutMs: 300_000 };
  const results = await Promise.allSettled([startServer(env, options), startServer(env, options), startWorker(env, options), startWorker(env, options)]);
  const seconds = round((performance.now() - started) / 1000, 1);
  for (const child of hog) child.kill('SIGKILL');
  const up = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  await Promise.all(up.map((service: RunningServer) => service.stop()));
  await redis.stop();
  return { seconds, ready: up.length, of: results.length };
}

/** issue 20's section: how voxreel meets a new user in its first minute, measured on the compiled build. */
export async function measureFirstMinute(options: { startRuns: number; voices: readonly string[]; pathRuns: number; pathVoice: string }): Promise<FirstMinuteResult> {
  const listening: number[] = [];
  const ready: Record<Runtime, number[]> = { pypi: [], npm: [] };
  const runtimeNamed: Record<Runtime, string | null> = { pypi: null, npm: null };
  const idleTrees: Array<FirstMinuteResult['idle']> = [];
  let warmVoice: string | null = null;
  for (let run = 0; run < options.startRuns; run += 1) {
    // The runtimes alternate which starts first, so neither always follows the other's exit.
    for (const runtime of run % 2 === 0 ? RUNTIMES : [...RUNTIMES].reverse()) {
      const started = performance.now();
      const service = await startService({ ...STARTUP_ENV, ...runtimeEnv(runtime) });
      if (runtime === 'pypi') listening.push(performance.now() - started);
      ready[runtime].push(await readyAfter(service, started));
      const readyz = (await (await fetch(`${service.baseUrl}/readyz`)).json()) as { warmVoice?: string; onnxruntime?: string };
      runtimeNamed[runtime] = readyz.onnxruntime ?? null;
      if (runtime === 'pypi') {
        warmVoice = readyz.warmVoice ?? null;
        // At rest after four requests to the start-up voice, in every start: the target holds for each, not their median.
        if (warmVoice) for (let request = 0; request < 4; request += 1) await timedTts(service, { text: textOf(200), voice: warmVoice, format: 'wav' });
        await new Promise((resolve) => setTimeout(resolve, 1000));
        idleTrees.push(await treeRss(service.pid));
      }
      await service.stop();
    }
  }
  console.log(
    `  ready in ${timings(ready.pypi).p50} ms on ${runtimeNamed.pypi} (listening ${timings(listening).p50} ms), ${timings(ready.npm).p50} ms on ${runtimeNamed.npm}; ` +
      `start-up voice ${warmVoice}; idle tree ${idleTrees.map((tree) => tree.treeMb).join(', ')} MB`,
  );

  const firstRequests: FirstRequest[] = [];
  // The report's breakdown: the largest of the starts' idle trees (the one the target is judged on).
  const idle = idleTrees.reduce((largest, tree) => (tree.treeMb > largest.treeMb ? tree : largest), { treeMb: 0, processes: [] });
  const peakMb: FirstMinuteResult['peakMb'] = {};
  for (const voice of options.voices) {
    const service = await startService(STARTUP_ENV);
    await readyAfter(service, performance.now());
    const body = { text: textOf(200), voice, format: 'wav' };
    const firstMs = await timedTts(service, body);
    const next = [await timedTts(service, body), await timedTts(service, body), await timedTts(service, body)];
    const warmMs = timings(next).p50;
    firstRequests.push({ voice, firstMs: round(firstMs, 1), warmMs, ratio: round(firstMs / warmMs, 2) });
    console.log(`  ${voice}: first request ${round(firstMs, 1)} ms, then ${warmMs} ms`);
    for (const child of descendants(service.pid)) peakMb[child.kind] = Math.max(peakMb[child.kind] ?? 0, Math.round(child.hwmKb / MB));
    peakMb['API (node)'] = Math.max(peakMb['API (node)'] ?? 0, Math.round(((await procStatusKb(service.pid, 'VmHWM')) ?? 0) / MB));
    await service.stop();
  }

  const paths = await comparePaths(options.pathVoice, options.pathRuns);
  const underLoad = await startUnderLoad();
  console.log(`  four processes under a CPU hog: ${underLoad.ready} of ${underLoad.of} ready in ${underLoad.seconds} s`);
  const python = await installPiperTts().catch((error: unknown) => new Error(`piper-tts could not be installed: ${String(error)}`));
  const notInstalled = (error: Error): PiperComparison => ({ measured: false, reason: error.message });
  const piper = python instanceof Error ? notInstalled(python) : await comparePiper({ python });
  const piperNpm = python instanceof Error ? notInstalled(python) : await comparePiper({ python, runs: 1, runtime: 'npm' });
  for (const [runtime, result] of [['pypi', piper], ['npm', piperNpm]] as const) {
    if (result.measured) console.log(`  Piper on ${runtime}: ${result.ratio.p50}× piper-tts's speed; first audio ${result.firstAudio.voxreel.p50} ms (piper-tts ${result.firstAudio.piperTts.p50} ms)`);
  }
  const piperAsUser = python instanceof Error ? { measured: false as const, reason: python.message } : await measurePiperAsUser({ runs: 5, python });
  if (piperAsUser.measured) console.log(`  Piper as a user runs it: ${piperAsUser.ratio.pypi.p50}× piper-tts's synthesize_wav (on npm's runtime ${piperAsUser.ratio.npm.p50}×)`);
  const docker = await measureDockerImage(options.startRuns);
  return {
    listeningMs: timings(listening),
    readyMs: timings(ready.pypi),
    readyByRuntime: { pypi: timings(ready.pypi), npm: timings(ready.npm) },
    runtimeNamed,
    idleTreeMb: idleTrees.map((tree) => tree.treeMb),
    warmVoice,
    firstRequests,
    idle,
    peakMb,
    paths,
    underLoad,
    piper,
    piperNpm,
    piperAsUser,
    docker,
  };
}
