import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { descendantsOf, processTable } from '../test/helpers/process-table.js';
import { freePort, startRedis } from '../test/helpers/redis-server.js';
import { EnvSchema } from '../src/config.js';
import { CACHES_OFF, postJson, startService, startWorkerService, type Service } from './service.js';
import { median, percentile, round, timings, type Timings } from './stats.js';
import { narrationOf, sentenceOf } from './texts.js';
import { cpuSeconds, machineTicks } from './throughput.js';
import { PORTRAIT } from './video.js';

export interface ScalePlan {
  /** Numbers of `voxreel worker` processes, each with CONCURRENCY=1. */
  levels: readonly number[];
  rounds: number;
  /** Per level and round: seconds of short /tts requests, then this many videos per worker. */
  ttsSeconds: number;
  videosPerWorker: number;
  /** Narration of each video, in seconds. */
  videoSeconds: number;
  /** Requests on each side for the queue's overhead, and again for cache hits. */
  latencyRuns: number;
}

export interface ScaleRate {
  /** Median over the rounds of jobs per second, each round from its first request to its last answer. */
  perSecond: number;
  rounds: number[];
  /** perSecond over one worker's. */
  speedUp: number;
  jobs: number;
  errors: number;
  /** End to end, p50 of every job of the level. */
  p50Ms: number;
  /** The job alone, in its worker (its `job finished` log line), p50. */
  workerP50Ms: number;
  /** CPU time of the cluster's processes per job answered, ms, by role. */
  cpuMsPerJob: CpuByRole & { total: number };
  /** The cluster's CPU time over the level's wall time: how many cores it kept busy. */
  coresBusy: number;
  /** The same for the whole machine, whoever used it (/proc/stat). */
  machineCoresBusy: number;
}

/**
 * CPU time of the processes of a cluster, in seconds: the API process and everything under it; redis-server; the
 * workers' Node processes; the programs they ran and waited for (ffmpeg, ffprobe); their engine hosts (and a
 * warm encoder waiting for its next job).
 */
export interface CpuByRole {
  api: number;
  redis: number;
  workers: number;
  ffmpeg: number;
  engineHosts: number;
}

export interface ScaleLevel {
  workers: number;
  clients: number;
  tts: ScaleRate;
  video: ScaleRate;
}

export interface Latency extends Timings {
  p90: number;
}

export interface ScaleResult {
  plan: ScalePlan;
  cores: number;
  voice: string;
  /** Lengths of the one-sentence /tts texts. */
  sentenceCharacters: { min: number; max: number };
  video: { case: string; characters: number; duration: number };
  levels: ScaleLevel[];
  /** A short synchronous /tts with the caches off: run by the API process itself, or queued in Redis for one worker. */
  queue: { embedded: Latency; redis: Latency; p50DifferenceMs: number; p90DifferenceMs: number };
  /** One /tts repeated, answered from the request cache (in the process, or in Redis). */
  cacheHit: { embedded: Latency; redis: Latency };
}

/** The service's own defaults, which the benchmark's servers otherwise turn off. */
const CACHES_ON = { CACHE_MAX_ENTRIES: String(EnvSchema.properties.CACHE_MAX_ENTRIES.default), SENTENCE_CACHE_MB: String(EnvSchema.properties.SENTENCE_CACHE_MB.default) };
/** Above this many requests a /tts round stops early, so it stays bounded even on a very fast machine. */
const MAX_JOBS_PER_ROUND = 2000;
const WARM_UP_TRIES = 20;

interface JobAnswer {
  cached?: boolean;
  duration?: number;
}

/**
 * Issue 14 on one machine: one API process and 1, 2, 4… `voxreel worker` processes on one redis-server (all
 * started here, local storage in one temporary OUTPUT_DIR), then what the queue adds to a job and what a cache hit
 * costs, each against an API process that runs its jobs itself. Everything started is stopped, even on failure.
 */
export async function measureScale(plan: ScalePlan, options: { voice: string; workDir: string }): Promise<ScaleResult> {
  const { voice } = options;
  const outputDir = await mkdtemp(path.join(options.workDir, 'scale-'));
  const redis = await startRedis();
  const redisProcess = redisPid(redis.port);
  const forgetRedis = killAtExit(redisProcess);
  const running = new Set<{ stop(): Promise<void> }>();
  // Processes are started one at a time: a start is seconds of CPU, and two at once on a busy machine are no faster.
  const started = async <T extends { stop(): Promise<void> }>(starting: Promise<T>): Promise<T> => {
    const child = await starting;
    running.add(child);
    return child;
  };
  let sentence = 0;
  const nextSentence = () => sentenceOf(sentence++);
  const tts = (text: string) => ({ text, voice, format: 'mp3' });
  const video = { text: narrationOf(plan.videoSeconds), voice, resolution: PORTRAIT.resolution, aspect_ratio: PORTRAIT.aspectRatio };
  const warm = (api: Service) => (workers: readonly Service[]) => warmUp(api, workers, nextSentence, voice);
  try {
    // Cache hits first, on processes of their own with the caches on (the defaults).
    const cached = await started(Cluster.start({ redisUrl: redis.url, redisPid: redisProcess, outputDir, queueName: 'bench-scale-cached', env: CACHES_ON }));
    const embeddedCached = await started(startService({ ...CACHES_ON, CONCURRENCY: '1' }));
    await cached.resize(1, warm(cached.api));
    const repeated = tts(nextSentence());
    for (const side of [embeddedCached, cached.api]) {
      await postOrThrow(side, '/tts', tts(nextSentence()), false);
      await postOrThrow(side, '/tts', repeated, false);
      for (let run = 0; run < 3; run += 1) await postOrThrow(side, '/tts', repeated, true);
    }
    const [hitEmbedded, hitRedis] = await interleaved([embeddedCached, cached.api], () => repeated, plan.latencyRuns, true);
    const cacheHit = { embedded: latency(hitEmbedded), redis: latency(hitRedis) };
    console.log(`  cache hit: embedded p50 ${cacheHit.embedded.p50} ms p90 ${cacheHit.embedded.p90} ms; Redis p50 ${cacheHit.redis.p50} ms p90 ${cacheHit.redis.p90} ms`);
    await Promise.all([cached.stop(), embeddedCached.stop()]);

    // Everything else with the caches off.
    const cluster = await started(Cluster.start({ redisUrl: redis.url, redisPid: redisProcess, outputDir, queueName: 'bench-scale', env: CACHES_OFF }));
    const embedded = await started(startService({ ...CACHES_OFF, CONCURRENCY: '1' }));
    await cluster.resize(plan.levels[0] ?? 1, warm(cluster.api));
    for (let run = 0; run < 3; run += 1) await postOrThrow(embedded, '/tts', tts(nextSentence()), false);
    const texts = Array.from({ length: plan.latencyRuns }, nextSentence);
    const [viaEmbedded, viaRedis] = await interleaved([embedded, cluster.api], (run) => tts(texts[run] as string), plan.latencyRuns, false);
    const queue = { embedded: latency(viaEmbedded), redis: latency(viaRedis) };
    console.log(
      `  short /tts, caches off: embedded p50 ${queue.embedded.p50} ms p90 ${queue.embedded.p90} ms; ` +
        `Redis + 1 worker p50 ${queue.redis.p50} ms p90 ${queue.redis.p90} ms`,
    );
    await embedded.stop();

    const slices = new Map(plan.levels.map((workers) => [workers, { tts: [] as Slice[], video: [] as Slice[] }]));
    let duration = 0;
    for (let pass = 0; pass < plan.rounds; pass += 1) {
      // Up, then down, then up: a drift in the machine's other load falls on every level alike.
      for (const workers of pass % 2 ? [...plan.levels].reverse() : plan.levels) {
        await cluster.resize(workers, warm(cluster.api));
        const clients = 2 * workers;
        const measured = slices.get(workers);
        measured?.tts.push(await closedLoop(cluster, '/tts', () => tts(nextSentence()), clients, { ms: plan.ttsSeconds * 1000, jobs: MAX_JOBS_PER_ROUND }));
        const videos = await closedLoop(cluster, '/tts-video', () => video, clients, { ms: Infinity, jobs: plan.videosPerWorker * workers });
        measured?.video.push(videos);
        duration = videos.duration ?? duration;
      }
    }
    const [one] = plan.levels;
    const levels: ScaleLevel[] = [];
    for (const workers of plan.levels) {
      const measured = slices.get(workers) ?? { tts: [], video: [] };
      const baseline = levels.find((level) => level.workers === one);
      const level = {
        workers,
        clients: 2 * workers,
        tts: rate(measured.tts, baseline?.tts.perSecond),
        video: rate(measured.video, baseline?.video.perSecond),
      };
      levels.push(level);
      const describe = (value: ScaleRate, perMinute: boolean) =>
        `${perMinute ? `${round(60 * value.perSecond, 1)}/min` : `${value.perSecond}/s`} ×${value.speedUp}, p50 ${value.p50Ms} ms ` +
        `(in the worker ${value.workerP50Ms} ms), ${value.cpuMsPerJob.total} CPU ms a job (ffmpeg ${value.cpuMsPerJob.ffmpeg}), ` +
        `${value.coresBusy} cores busy (machine ${value.machineCoresBusy}), ${value.errors} errors`;
      console.log(`  ${workers} worker${workers === 1 ? '' : 's'}: /tts ${describe(level.tts, false)}; ${plan.videoSeconds} s videos ${describe(level.video, true)}`);
    }

    const lengths = Array.from({ length: sentence }, (_, n) => sentenceOf(n).length);
    return {
      plan,
      cores: os.availableParallelism(),
      voice,
      sentenceCharacters: { min: Math.min(...lengths), max: Math.max(...lengths) },
      video: { case: PORTRAIT.label, characters: video.text.length, duration },
      levels,
      queue: { ...queue, p50DifferenceMs: round(queue.redis.p50 - queue.embedded.p50, 1), p90DifferenceMs: round(queue.redis.p90 - queue.embedded.p90, 1) },
      cacheHit,
    };
  } finally {
    await Promise.allSettled([...running].map((service) => service.stop()));
    await redis.stop();
    forgetRedis();
    await rm(outputDir, { recursive: true, force: true });
  }
}

/**
 * One API process on Redis and its workers, which share its OUTPUT_DIR (a folder of `outputDir` named after the
 * queue) and write URLs under its /files.
 */
class Cluster {
  private running: Service[] = [];

  private constructor(
    readonly api: Service,
    readonly redisPid: number | undefined,
    private readonly workerEnv: Record<string, string>,
  ) {}

  static async start(options: { redisUrl: string; redisPid: number | undefined; outputDir: string; queueName: string; env: Record<string, string> }): Promise<Cluster> {
    const port = await freePort();
    const outputDir = path.join(options.outputDir, options.queueName);
    await mkdir(outputDir);
    const env = {
      ...options.env,
      REDIS_URL: options.redisUrl,
      QUEUE_NAME: options.queueName,
      OUTPUT_DIR: outputDir,
      PORT: String(port),
      CDN_URL: `http://127.0.0.1:${port}/files`,
    };
    return new Cluster(await startService(env), options.redisPid, { ...env, CONCURRENCY: '1' });
  }

  get workers(): readonly Service[] {
    return this.running;
  }

  /** Starts or stops workers until `count` run; new ones are warmed up before this returns. */
  async resize(count: number, warm: (workers: readonly Service[]) => Promise<void>): Promise<void> {
    await Promise.all(this.running.splice(count).map((worker) => worker.stop()));
    if (this.running.length === count) return;
    // One at a time, as the other processes are started.
    while (this.running.length < count) this.running.push(await startWorkerService(this.workerEnv));
    await warm(this.running);
  }

  async stop(): Promise<void> {
    await Promise.all(this.running.splice(0).map((worker) => worker.stop()));
    await this.api.stop();
  }
}

/**
 * As many short requests at once as there are workers (a worker with CONCURRENCY=1 takes one job at a time, so
 * each takes one), until every worker has finished two jobs; then one short video each.
 */
async function warmUp(api: Service, workers: readonly Service[], nextSentence: () => string, voice: string): Promise<void> {
  const finished = (worker: Service) => worker.logs.filter((entry) => entry.msg === 'job finished').length;
  for (let tries = 0; tries < WARM_UP_TRIES && workers.some((worker) => finished(worker) < 2); tries += 1) {
    await Promise.all(workers.map(() => postOrThrow(api, '/tts', { text: nextSentence(), voice, format: 'mp3' }, false)));
  }
  const cold = workers.filter((worker) => finished(worker) < 2).length;
  if (cold) console.warn(`  bench: ${cold} worker(s) took fewer than two warm-up jobs`);
  const short = { text: narrationOf(5), voice, resolution: PORTRAIT.resolution, aspect_ratio: PORTRAIT.aspectRatio };
  await Promise.all(workers.map(() => postOrThrow(api, '/tts-video', short, false)));
}

interface Slice {
  seconds: number;
  latencies: number[];
  errors: number;
  workerMs: number[];
  cpu: CpuByRole;
  machine: { busy: number; total: number };
  /** Of the last video answered. */
  duration?: number;
}

/**
 * Closed loop: `clients` clients each POST again as soon as their answer is read, until `limits.ms` have passed or
 * `limits.jobs` requests were sent; the requests in flight then are waited for and counted.
 */
async function closedLoop(cluster: Cluster, route: string, bodyOf: () => unknown, clients: number, limits: { ms: number; jobs: number }): Promise<Slice> {
  const url = `${cluster.api.baseUrl}${route}`;
  const marks = cluster.workers.map((worker) => worker.logs.length);
  const [cpuBefore, before] = [await cpuByRole(cluster), await machineTicks()];
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  let duration: number | undefined;
  const started = performance.now();
  const deadline = started + limits.ms;
  const client = async () => {
    while (performance.now() < deadline && sent < limits.jobs) {
      sent += 1;
      const answer = await postJson<JobAnswer>(url, bodyOf()).catch(() => undefined);
      if (answer?.status !== 200) {
        errors += 1;
        continue;
      }
      if (answer.body.cached) throw new Error(`POST ${route} was answered from the cache with the caches off`);
      latencies.push(answer.ms);
      duration = answer.body.duration;
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const seconds = (performance.now() - started) / 1000;
  const [cpuAfter, after] = [await cpuByRole(cluster), await machineTicks()];
  const workerMs = cluster.workers.flatMap((worker, index) =>
    worker.logs
      .slice(marks[index])
      .filter((entry) => entry.msg === 'job finished')
      .map((entry) => 1000 * Number(entry.seconds)),
  );
  const cpu = Object.fromEntries(ROLES.map((role) => [role, cpuAfter[role] - cpuBefore[role]])) as unknown as CpuByRole;
  return { seconds, latencies, errors, workerMs, cpu, machine: { busy: after.busy - before.busy, total: after.total - before.total }, duration };
}

function rate(slices: readonly Slice[], baseline: number | undefined): ScaleRate {
  const sum = (value: (slice: Slice) => number) => slices.reduce((total, slice) => total + value(slice), 0);
  const rounds = slices.map((slice) => slice.latencies.length / slice.seconds);
  const perSecond = median(rounds);
  const jobs = sum((slice) => slice.latencies.length);
  const seconds = sum((slice) => slice.seconds);
  const cpu = Object.fromEntries(ROLES.map((role) => [role, sum((slice) => slice.cpu[role])])) as unknown as CpuByRole;
  const total = ROLES.reduce((all, role) => all + cpu[role], 0);
  const perJob = (value: number) => round((1000 * value) / jobs, 1);
  return {
    perSecond: round(perSecond, 3),
    rounds: rounds.map((value) => round(value, 3)),
    speedUp: round(perSecond / (baseline ?? perSecond), 2),
    jobs,
    errors: sum((slice) => slice.errors),
    p50Ms: round(percentile(slices.flatMap((slice) => slice.latencies), 50), 1),
    workerP50Ms: round(percentile(slices.flatMap((slice) => slice.workerMs), 50), 1),
    cpuMsPerJob: { ...(Object.fromEntries(ROLES.map((role) => [role, perJob(cpu[role])])) as unknown as CpuByRole), total: perJob(total) },
    coresBusy: round(total / seconds, 2),
    machineCoresBusy: round((os.availableParallelism() * sum((slice) => slice.machine.busy)) / sum((slice) => slice.machine.total), 2),
  };
}

const ROLES = ['api', 'redis', 'workers', 'ffmpeg', 'engineHosts'] as const satisfies ReadonlyArray<keyof CpuByRole>;

/** The cluster's CPU time so far, by role (processes gone since count as nothing: their time moved to who waited for them). */
async function cpuByRole(cluster: Cluster): Promise<CpuByRole> {
  const table = processTable();
  const all = async (pids: readonly number[]) => {
    const times = await Promise.all(pids.map(cpuSeconds));
    return times.reduce((sum, time) => sum + (time ? time.own + time.reaped : 0), 0);
  };
  const workers = await Promise.all(cluster.workers.map((worker) => cpuSeconds(worker.pid)));
  return {
    api: await all([cluster.api.pid, ...descendantsOf(cluster.api.pid, table).map((entry) => entry.pid)]),
    redis: cluster.redisPid === undefined ? 0 : ((await cpuSeconds(cluster.redisPid))?.own ?? 0),
    workers: workers.reduce((sum, time) => sum + (time?.own ?? 0), 0),
    ffmpeg: workers.reduce((sum, time) => sum + (time?.reaped ?? 0), 0),
    engineHosts: await all(cluster.workers.flatMap((worker) => descendantsOf(worker.pid, table).map((entry) => entry.pid))),
  };
}

/** `runs` pairs of requests, one to each side, which goes first alternating; the same body on both sides. */
async function interleaved(sides: readonly [Service, Service], bodyOf: (run: number) => unknown, runs: number, cached: boolean): Promise<[number[], number[]]> {
  const ms: [number[], number[]] = [[], []];
  for (let run = 0; run < runs; run += 1) {
    for (const side of run % 2 ? [1, 0] : [0, 1]) ms[side]?.push(await postOrThrow(sides[side] as Service, '/tts', bodyOf(run), cached));
  }
  return ms;
}

/** The request's time end to end; anything but a 200 whose `cached` is as expected stops the section. */
async function postOrThrow(service: Service, route: string, body: unknown, cached: boolean): Promise<number> {
  const answer = await postJson<JobAnswer>(`${service.baseUrl}${route}`, body);
  if (answer.status !== 200) throw new Error(`POST ${route}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 500)}`);
  if (Boolean(answer.body.cached) !== cached) throw new Error(`POST ${route}: cached ${String(answer.body.cached)}, expected ${String(cached)}`);
  return answer.ms;
}

function latency(runs: readonly number[]): Latency {
  return { ...timings(runs), p90: round(percentile(runs, 90), 1) };
}

/** The redis-server this process started on `port`, found in the process table (the test helper keeps its child to itself). */
function redisPid(port: number): number | undefined {
  return descendantsOf(process.pid).find((entry) => entry.args.startsWith('redis-server') && entry.args.endsWith(`:${port}`))?.pid;
}

/** Kills the process if the benchmark exits before its `finally` runs (its deadline); returns what undoes that. */
function killAtExit(pid: number | undefined): () => void {
  if (pid === undefined) return () => undefined;
  const kill = () => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  process.once('exit', kill);
  return () => process.off('exit', kill);
}
