// Regression tests for issue 10: what an adversarial run against the real server process broke, on loopback only.
// Every group also checks that it left no process beyond the steady engine workers, no temporary file, and that
// every error answer had the documented body and an x-request-id.
import { request as httpRequest } from 'node:http';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meanVolume, probe } from '../helpers/media.js';
import { processTable, type ProcessEntry } from '../helpers/process-table.js';
import { startServer, type RunningServer } from '../helpers/server-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const work = useTempDir('voxreel-red-team-');

/** A real server with its own scratch root and its own OS temp dir (TMPDIR), so leftovers can be told apart. */
interface Server extends RunningServer {
  scratchDir: string;
  tmpDir: string;
  concurrency: number;
}

let servers = 0;

async function boot(env: Record<string, string> = {}, reuse?: Pick<Server, 'scratchDir' | 'tmpDir'>): Promise<Server> {
  servers += 1;
  const scratchDir = reuse?.scratchDir ?? path.join(work, `scratch-${servers}`);
  const tmpDir = reuse?.tmpDir ?? path.join(work, `tmp-${servers}`);
  await mkdir(tmpDir, { recursive: true });
  const concurrency = Number(env.CONCURRENCY ?? '2');
  const server = await startServer({ SCRATCH_DIR: scratchDir, TMPDIR: tmpDir, CONCURRENCY: String(concurrency), RATE_LIMIT_MAX: '0', ...env });
  return Object.assign(server, { scratchDir, tmpDir, concurrency });
}

/**
 * Kills the server, then waits a few seconds at most for its children: an engine host still starting when its server
 * dies runs on until it finds its channel closed, writing tsx's cache into its TMPDIR under our folder meanwhile.
 */
async function shutDown(server: Server): Promise<void> {
  const family = server.children();
  await server.stop();
  await waitFor(() => !family.some(({ pid }) => running(pid)), 5000);
}

/** One server for the tests of this describe block: started before them, killed after them. */
function useServer(env: Record<string, string> = {}): () => Server {
  let server: Server | undefined;
  beforeAll(async () => {
    server = await boot(env);
  });
  afterAll(async () => server && shutDown(server));
  return () => {
    if (!server) throw new Error('The server starts in beforeAll: use it inside the tests.');
    return server;
  };
}

const FFMPEG = /^(\S*\/)?ffmpeg\s/;
const ENGINE_HOST = /\/engines\/(?:\w+\/)?([\w-]+)-host\.[jt]s\b/;

// ---- what a server may leave behind ----------------------------------------------------------------------------

/** A process the server keeps while idle, with how many of its kind it may have. */
function steadyKind({ args, ppid }: ProcessEntry, concurrency: number): { key: string; max: number } | undefined {
  // tsx's esbuild services: of each Node process that runs TypeScript (its loader thread has one of its own).
  if (/\/esbuild --service=/.test(args)) return { key: `esbuild of ${ppid}`, max: 2 };
  // Engine hosts (eSpeak NG, Flite, Piper): pools of at most CONCURRENCY each.
  const host = ENGINE_HOST.exec(args)?.[1];
  if (host) return { key: `${host} host`, max: concurrency };
  if (/^(\S*\/)?festival\s+--pipe/.test(args)) return { key: 'festival', max: 1 };
  // A spare stream encoder: speed 1 (no atempo), output to its pipe, one per encoding and rates.
  if (FFMPEG.test(args) && args.includes('-flush_packets 1') && !args.includes('atempo')) {
    return { key: `spare ${/-c:a (\S+)/.exec(args)?.[1]} ${[...args.matchAll(/-ar (\d+)/g)].map((match) => match[1]).join('→')}`, max: 1 };
  }
  return undefined;
}

/** The server's children beyond its steady set (engine hosts, Festival, one spare encoder per kind). */
function extraChildren(server: Server): string[] {
  const counts = new Map<string, number>();
  return server.children().flatMap((entry) => {
    const { args } = entry;
    const kind = steadyKind(entry, server.concurrency);
    const count = (counts.get(kind?.key ?? '') ?? 0) + 1;
    if (kind) counts.set(kind.key, count);
    return kind && count <= kind.max ? [] : [`${entry.pid} (child of ${entry.ppid}): ${args.slice(0, 300)}`];
  });
}

async function entriesUnder(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { recursive: true })).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/**
 * A live server's own scratch folder: its ffmpeg launcher, and its engines' TMPDIRs, one per host (tsx caches
 * there; ONNX Runtime 1.32's telemetry client, its events turned off, writes a `.ses` file of its session's start).
 */
const STEADY_SCRATCH = /^\d+-[0-9a-f]+(\/bin(\/[^/]+-tied)?|\/engines(\/host-[^/]+(\/tsx-\d+(\/.*)?|\/\.ses)?)?)?$/;
const HOST_TEMP_DIR = /^\d+-[0-9a-f]+\/engines\/host-[^/]+$/;

/** Temporary files and folders the server left: in its scratch root, OUTPUT_DIR/.tmp, and its OS temp dir. */
async function temporaryLeftovers(server: Server): Promise<string[]> {
  const scratch = await entriesUnder(server.scratchDir);
  const hosts = server.children().filter(({ args }) => ENGINE_HOST.test(args)).length;
  const hostDirs = scratch.filter((entry) => HOST_TEMP_DIR.test(entry));
  const pending = await entriesUnder(path.join(server.outputDir, '.tmp'));
  const osTemp = (await entriesUnder(server.tmpDir)).filter((entry) => entry.startsWith('voxreel'));
  return [
    ...scratch.filter((entry) => !STEADY_SCRATCH.test(entry)).map((entry) => `SCRATCH_DIR/${entry}`),
    ...(hostDirs.length > hosts ? [`SCRATCH_DIR: ${hostDirs.length} engine host TMPDIRs for ${hosts} hosts`] : []),
    ...pending.map((entry) => `.tmp/${entry}`),
    ...osTemp.map((entry) => `TMPDIR/${entry}`),
  ];
}

/** After a group: back to the steady children, and no temporary file left (given a few seconds to settle). */
async function expectClean(server: Server): Promise<void> {
  await expect.poll(() => extraChildren(server), { timeout: 8000, interval: 200 }).toEqual([]);
  await expect.poll(() => temporaryLeftovers(server), { timeout: 5000, interval: 200 }).toEqual([]);
}

/** Whether a process runs (a zombie waiting for its reaper does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

// ---- requests --------------------------------------------------------------------------------------------------

function post(server: Server, route: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(`${server.baseUrl}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

/** Checks an error answer: its status, the body documented for its route (OpenAI's under /v1), the request id. */
async function expectError(response: Response, status: number, code: string): Promise<void> {
  const body: unknown = await response.json();
  expect({ status: response.status, body }).toMatchObject({ status });
  const requestId = response.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  if (new URL(response.url).pathname.startsWith('/v1/')) {
    expect(body).toEqual({ error: { message: expect.any(String), type: expect.any(String), param: expect.toSatisfy((param) => param === null || typeof param === 'string'), code: code.toLowerCase() } });
  } else {
    expect(body).toEqual({ status: 'error', error: expect.objectContaining({ code, message: expect.any(String), requestId }) });
  }
}

interface HungUp {
  status: number;
  /** Body bytes read before hanging up (or all of them, had the body been shorter). */
  read: number;
  ended: boolean;
}

/** POSTs JSON, reads about `bytes` of the answer's body, then destroys the socket mid-stream. */
function readThenHangUp(server: Server, route: string, body: unknown, bytes: number): Promise<HungUp> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${server.baseUrl}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
      let read = 0;
      const done = (ended: boolean) => resolve({ status: response.statusCode ?? 0, read, ended });
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read < bytes) return;
        request.destroy();
        done(false);
      });
      response.on('end', () => done(true));
    });
    request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
    request.setTimeout(30_000, () => request.destroy(new Error('no answer in 30 s')));
    request.end(JSON.stringify(body));
  });
}

/** A generated file's place under OUTPUT_DIR, from its public URL (the server's CDN_URL names port 0). */
function fileOf(server: Server, url: string): string {
  return path.join(server.outputDir, new URL(url).pathname.replace(/^\/files\//, ''));
}

/** Every published file (audio, video, captions), relative to OUTPUT_DIR. */
async function publishedFiles(server: Server): Promise<string[]> {
  const kinds = ['audio', 'video', 'captions'];
  const lists = await Promise.all(kinds.map(async (kind) => (await entriesUnder(path.join(server.outputDir, kind))).map((name) => `${kind}/${name}`)));
  return lists.flat();
}

async function metric(server: Server, name: string): Promise<number> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
}

async function listVoices(server: Server): Promise<string[]> {
  const { voices } = (await (await fetch(`${server.baseUrl}/voices?language=en`)).json()) as { voices: Array<{ id: string }> };
  return voices.map(({ id }) => id);
}

/** Polls `check` every few milliseconds until it holds or `timeoutMs` passes; returns whether it held. */
async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return true;
    await delay(5);
  }
  return false;
}

/**
 * The groups that need no limit of their own share one server. Jobs per client are not capped (group 1 hangs up on
 * 16 streams at once), and MAX_AUDIO_SECONDS is raised: Flite speaks "A. " × 1666 for some 800 s, half a second a
 * letter, above the default 600 s (on defaults it is refused with OUTPUT_TOO_LONG, in seconds).
 */
const shared = useServer({ CLIENT_MAX_JOBS: '0', MAX_AUDIO_SECONDS: '1200' });

const PROSE = 'Streaming speech stops the moment the listener hangs up on it. ';
/** About 3000 characters: minutes of audio, far more than is read before hanging up. */
const LONG_TEXT = PROSE.repeat(48);
/** Five minutes of narration at 1080p and 60 fps: a render of seconds. */
const LONG_VIDEO = { text: PROSE.repeat(80).slice(0, 5000), voice: 'espeak-ng:en-us', fps: 60 };

// ---- 1 ---------------------------------------------------------------------------------------------------------

describe('1. /v1/audio/speech when the client hangs up mid-stream', () => {
  const server = shared;

  it('leaves no encoder behind, at any speed and in every format', async () => {
    // Speed 1 takes a spare encoder; any other speed starts its own with atempo (two chained below 0.5). The old leak
    // needed synthesis still going when the client left, so those use Flite, slower than eSpeak NG: with eSpeak NG
    // the whole text is often spoken before the first kilobyte is read.
    const cases = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'].flatMap((format) => [
      { format, speed: 1, voice: 'espeak-ng:en-us' },
      { format, speed: 1.5, voice: 'flite:slt' },
      ...(['flac', 'wav'].includes(format) ? [] : [{ format, speed: 0.3, voice: 'flite:slt' }]),
    ]);
    const hangUp = async ({ format, speed, voice }: (typeof cases)[number]) => {
      const body = { model: 'tts-1', input: LONG_TEXT, voice, response_format: format, speed };
      const answer = await readThenHangUp(server(), '/v1/audio/speech', body, 1000);
      expect({ format, speed, ...answer }).toMatchObject({ format, speed, status: 200, ended: false });
    };
    await Promise.all(cases.map(hangUp));
    await expectClean(server());
  });
});

// ---- 2 ---------------------------------------------------------------------------------------------------------

describe('2. a server killed with SIGKILL in the middle of a video', () => {
  const started: Server[] = [];
  afterAll(async () => {
    for (const server of started.reverse()) await shutDown(server);
  });

  it('takes every child with it, and the next server on the same SCRATCH_DIR removes its scratch folder', async () => {
    const first = await boot({ CONCURRENCY: '1' });
    started.push(first);
    const render = post(first, '/tts-video', LONG_VIDEO).catch(() => undefined);
    // The render's ffmpeg runs work in the job's scratch folder (not the splicer's start-up self-check).
    const renderWork = new RegExp(`${first.scratchDir}/${first.child.pid}-[0-9a-f]+/video-`);
    const encoding = await waitFor(() => first.children().some(({ args }) => FFMPEG.test(args) && renderWork.test(args)), 30_000);
    expect(encoding, 'an ffmpeg of the render was seen').toBe(true);
    const family = first.children();
    expect(await entriesUnder(first.scratchDir)).toContainEqual(expect.stringMatching(new RegExp(`^${first.child.pid}-[0-9a-f]+/video-[^/]+$`)));
    first.child.kill('SIGKILL');
    await first.exited;
    await render;
    const stillRunning = (entries: ProcessEntry[]) => entries.filter(({ pid }) => running(pid)).map(({ args }) => args);
    // Tied to the server, its ffmpeg runs die with it (the kernel kills them); untied, a render's ran on for seconds.
    await expect.poll(() => stillRunning(family.filter(({ args }) => FFMPEG.test(args))), { timeout: 1000, interval: 50 }).toEqual([]);
    // Engine hosts leave when their IPC channel closes; and nothing else of the server's (by its folders) may be left.
    const mentionsServer = (entry: ProcessEntry) => [first.scratchDir, first.outputDir, first.tmpDir].some((dir) => entry.args.includes(dir));
    await expect.poll(() => [...stillRunning(family), ...stillRunning(processTable().filter(mentionsServer))], { timeout: 5000 }).toEqual([]);

    const second = await boot({ CONCURRENCY: '1' }, first);
    started.push(second);
    expect(await readdir(first.scratchDir)).toEqual([expect.stringMatching(new RegExp(`^${second.child.pid}-[0-9a-f]+$`))]);
    await expectClean(second);
  });
});

// ---- 3 ---------------------------------------------------------------------------------------------------------

describe('3. Flite jobs that are cancelled or time out', () => {
  const server = useServer({ TTS_TIMEOUT_MS: '1000', TIMEOUT_MS_PER_CHARACTER: '0', CONCURRENCY: '1' });
  /** Spans of some 400 characters with no sentence end, each one long Flite job: seconds of work in all. */
  const text = 'words spoken by flite without a stop '.repeat(110);
  const fliteFolders = async () => [...(await entriesUnder(server().scratchDir)), ...(await entriesUnder(server().tmpDir))].filter((entry) => /voxreel-flite-/.test(entry));

  it('leave no voxreel-flite-* folder when the client disconnects', async () => {
    const controller = new AbortController();
    // A video, whose deadline (VIDEO_TIMEOUT_MS) is not the one shortened here.
    const answer = post(server(), '/tts-video', { text, voice: 'flite:slt', resolution: '720p' }, {}, controller.signal).catch((error: unknown) => error);
    expect(await waitFor(async () => (await fliteFolders()).length > 0, 10_000), 'a Flite job was seen at work').toBe(true);
    controller.abort();
    expect(await answer).toBeInstanceOf(Error);
    await expect.poll(fliteFolders, { timeout: 5000 }).toEqual([]);
    await expectClean(server());
  });

  it('leave no voxreel-flite-* folder when they time out', async () => {
    await expectError(await post(server(), '/tts', { text, voice: 'flite:slt' }), 504, 'JOB_TIMEOUT');
    await expectError(await post(server(), '/v1/audio/speech', { model: 'tts-1', input: text, voice: 'flite:slt', response_format: 'wav' }), 504, 'JOB_TIMEOUT');
    await expect.poll(fliteFolders, { timeout: 5000 }).toEqual([]);
    await expectClean(server());
  });
});

// ---- 4 ---------------------------------------------------------------------------------------------------------

describe('4. retention shorter than a job', () => {
  /** 0.0005 h = 1.8 s, swept every 0.45 s. */
  const RETENTION_MS = 1800;
  const server = useServer({ RETENTION_HOURS: '0.0005' });

  it('does not sweep files still being made, and sweeps published ones once they are older', async () => {
    const started = performance.now();
    // Each answer read as it arrives: one left unread past the server's keep-alive timeout is cut off with its connection.
    const answer = async (response: Promise<Response>) => {
      const done = await response;
      return { status: done.status, body: (await done.json()) as { url: string; captionsUrl: string; srtUrl: string } };
    };
    const [video, audio] = await Promise.all([
      // Its captions are written before the render finishes, or after: either way the sweep must spare them.
      answer(post(server(), '/tts-video', LONG_VIDEO)),
      answer(post(server(), '/tts', { text: LONG_TEXT, voice: 'flite:slt', format: 'ogg', timestamps: true })),
    ]);
    const elapsedMs = performance.now() - started;
    expect(elapsedMs, 'the jobs outlast the retention period').toBeGreaterThan(RETENTION_MS);
    expect([video.status, audio.status]).toEqual([200, 200]);
    const { url, captionsUrl } = video.body;
    const { url: audioUrl, captionsUrl: vttUrl, srtUrl } = audio.body;
    const published = [url, captionsUrl, audioUrl, vttUrl, srtUrl].map((fileUrl) => fileOf(server(), fileUrl));
    await expect.poll(() => published.filter((file) => existsSync(file)), { timeout: 6000 }).toEqual([]);
    expect(await publishedFiles(server())).toEqual([]);
    await expectClean(server());
  });
});

// ---- 5 ---------------------------------------------------------------------------------------------------------

describe('5. runs of punctuation', () => {
  const server = shared;
  const RUNS: ReadonlyArray<[string, number]> = [['.', 318], [',', 368], ['!', 400], ['?', 400], [';', 400], [':', 400], [')', 400]];
  const texts = RUNS.flatMap(([mark, count]) => {
    const run = mark.repeat(count);
    return [
      { name: `${count}×${mark}`, text: run, speech: false },
      { name: `${count}×${mark} in prose`, text: `Here come the marks ${run} and here the prose goes on.`, speech: true },
    ];
  });

  it('give real audio on /tts and /v1/audio/speech with every engine', async () => {
    const voices = (await listVoices(server())).filter((id) => ['espeak-ng:en-us', 'flite:slt', 'festival:slt-hts'].includes(id));
    expect(voices).toEqual(expect.arrayContaining(['espeak-ng:en-us', 'flite:slt']));
    const spoken = async (voice: string) => {
      for (const [index, { name, text, speech }] of texts.entries()) {
        const tts = await post(server(), '/tts', { text, voice, format: 'wav' });
        expect({ voice, name, status: tts.status }).toEqual({ voice, name, status: 200 });
        const file = fileOf(server(), ((await tts.json()) as { url: string }).url);
        expect((await probe(file)).duration, `${voice} ${name}`).toBeGreaterThan(0);
        if (speech) expect(await meanVolume(file), `${voice} ${name}`).toBeGreaterThan(-60);
        const openAi = await post(server(), '/v1/audio/speech', { model: 'tts-1', input: text, voice });
        expect({ voice, name, status: openAi.status }).toEqual({ voice, name, status: 200 });
        const streamed = path.join(work, `${voice.replace(/\W/g, '-')}-${index}.mp3`);
        await writeFile(streamed, Buffer.from(await openAi.arrayBuffer()));
        expect((await probe(streamed)).duration, `${voice} ${name} on /v1`).toBeGreaterThan(0);
      }
    };
    await Promise.all(voices.map(spoken));
    await expectClean(server());
  });
});

// ---- 6 ---------------------------------------------------------------------------------------------------------

describe('6. bounded work: pathological texts finish in time', () => {
  const server = shared;

  it('"A. " × 1666 finishes well within the 60 s deadline on Flite and Festival', async () => {
    const voices = (await listVoices(server())).filter((id) => ['flite:slt', 'festival:slt-hts'].includes(id));
    expect(voices).toContain('flite:slt');
    const timed = async (voice: string) => {
      const started = performance.now();
      const response = await post(server(), '/tts', { text: 'A. '.repeat(1666), voice });
      const seconds = (performance.now() - started) / 1000;
      expect({ voice, status: response.status }).toEqual({ voice, status: 200 });
      const { duration } = (await response.json()) as { duration: number };
      console.info(`red team: "A. " × 1666 on ${voice}: ${seconds.toFixed(1)} s for ${duration.toFixed(0)} s of audio`);
      expect(seconds).toBeLessThan(60);
    };
    await Promise.all(voices.map(timed));
    await expectClean(server());
  });
});

describe('6. bounded work: output longer than allowed', () => {
  const server = useServer({ MAX_AUDIO_SECONDS: '60', MAX_VIDEO_SECONDS: '60' });

  it('"W" × 5000 answers OUTPUT_TOO_LONG and publishes nothing; so do /v1 and a video over MAX_VIDEO_SECONDS', async () => {
    const before = await publishedFiles(server());
    const started = performance.now();
    await expectError(await post(server(), '/tts', { text: 'W'.repeat(5000), voice: 'flite:slt' }), 422, 'OUTPUT_TOO_LONG');
    console.info(`red team: "W" × 5000 refused in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    // Some 70 s of speech in one span, refused before the first byte is sent.
    const over = 'W'.repeat(200);
    await expectError(await post(server(), '/v1/audio/speech', { model: 'tts-1', input: over, voice: 'flite:slt' }), 422, 'OUTPUT_TOO_LONG');
    await expectError(await post(server(), '/tts-video', { text: over, voice: 'flite:slt', resolution: '720p' }), 422, 'OUTPUT_TOO_LONG');
    expect(await publishedFiles(server())).toEqual(before);
    await expectClean(server());
  });
});

// ---- 7 ---------------------------------------------------------------------------------------------------------

describe('7. per-client job caps', () => {
  const server = useServer({ CLIENT_MAX_JOBS: '2', CONCURRENCY: '1', API_KEYS: 'a,b' });

  it('refuse a client its third job at once with RATE_LIMITED, and serve another client meanwhile', async () => {
    const video = (key: string) =>
      post(server(), '/tts-video', { text: 'One client must not take the whole queue.', voice: 'espeak-ng:en-us', resolution: '720p' }, { authorization: `Bearer ${key}` });
    const answered: Response[] = [];
    const fromA = Array.from({ length: 5 }, async () => {
      const response = await video('a');
      answered.push(response);
      return response;
    });
    // The refusals come at once, while the client's two admitted jobs are still running or queued.
    await expect.poll(() => answered.length, { timeout: 5000, interval: 20 }).toBe(3);
    expect(await metric(server(), 'voxreel_jobs_running')).toBe(1);
    for (const response of answered) {
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      await expectError(response, 429, 'RATE_LIMITED');
    }
    expect((await video('b')).status).toBe(200);
    expect((await Promise.all(fromA)).map((response) => response.status).sort()).toEqual([200, 200, 429, 429, 429]);
    await expectClean(server());
  });
});

// ---- 8 ---------------------------------------------------------------------------------------------------------

describe('8. SIGTERM with jobs running and queued', () => {
  let server: Server | undefined;
  afterAll(async () => server && shutDown(server));

  it('answers every request: queued ones 503 SHUTTING_DOWN at once, the running one as it ends', async () => {
    server = await boot({ CONCURRENCY: '1', SHUTDOWN_GRACE_MS: '4000', CLIENT_MAX_JOBS: '0' });
    const longJob = post(server, '/tts', { text: LONG_TEXT, voice: 'flite:slt', format: 'ogg' });
    await expect.poll(() => metric(server!, 'voxreel_jobs_running'), { timeout: 5000, interval: 50 }).toBe(1);
    const queued = [
      post(server, '/tts', { text: 'Queued behind the long one.', voice: 'espeak-ng:en-us' }),
      post(server, '/tts-video', { text: 'Queued behind the long one.', voice: 'espeak-ng:en-us', resolution: '720p' }),
      post(server, '/v1/audio/speech', { model: 'tts-1', input: 'Queued behind the long one.', voice: 'espeak-ng:en-us', response_format: 'wav' }),
    ].map((answer) => answer.then((response) => ({ response, at: performance.now() })));
    await expect.poll(() => metric(server!, 'voxreel_queue_depth'), { timeout: 5000, interval: 50 }).toBe(3);
    const family = server.children();
    const signalled = performance.now();
    server.child.kill('SIGTERM');
    for (const { response, at } of await Promise.all(queued)) {
      expect(at - signalled, 'answered promptly').toBeLessThan(1500);
      expect(response.headers.get('connection')).toBe('close');
      await expectError(response, 503, 'SHUTTING_DOWN');
    }
    const last = await longJob;
    if (last.status === 200) expect(((await last.json()) as { status: string }).status).toBe('success');
    else await expectError(last, 503, 'SHUTTING_DOWN');
    expect(await server.exited, JSON.stringify(server.logs.slice(-4))).toEqual({ code: 0, signal: null });
    await expect.poll(() => family.filter(({ pid }) => running(pid)).map(({ args }) => args), { timeout: 5000 }).toEqual([]);
    expect(await temporaryLeftovers(server)).toEqual([]);
    expect(await readdir(server.scratchDir), 'its own scratch folder removed').toEqual([]);
  });
});
