import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { QueuedJobData } from '../../src/jobs/redis/queue.js';
import { aliceText } from '../helpers/fixtures.js';
import { probe } from '../helpers/media.js';
import { processTable } from '../helpers/process-table.js';
import { startRedis, type RunningRedis } from '../helpers/redis-server.js';
import { startS3, type RunningS3 } from '../helpers/s3-server.js';
import { startServer, startWorker, type RunningServer } from '../helpers/server-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const VOICE = 'espeak-ng:en-us';
/** About a minute of narration: long enough to kill its worker while it runs. */
const LONG_TEXT = 'Every process shares one queue, one bucket and one set of limits, so any instance answers for any job. '.repeat(9);
/** Requests per second and API key; the other tests stay well under it with the key they use. */
const RATE_LIMIT = 20;
const KEY = { authorization: 'Bearer key-a' };
/**
 * Of the many hundred polls here, this many may be answered 503 (Retry-After) and retried, as the API documents for
 * a passing state: more, or a second 503 in a row, fails the test.
 */
const MAX_BUSY_ANSWERS = 3;

interface JobStatus {
  id: string;
  state: string;
  characters?: number;
  charactersDone?: number;
  result?: { url: string; status: string; captionsUrl?: string };
  error?: { code: string };
}

/**
 * Two API processes and two workers on one real Redis and one S3-compatible server, as `docker compose up` runs
 * them: what one instance queued, the other reads; limits are counted together; a worker killed mid-job loses nothing.
 */
describe('scale-out: two API processes and two workers on one Redis and one S3 server', () => {
  let redis: RunningRedis;
  let s3: RunningS3;
  const apis: RunningServer[] = [];
  const workers: RunningServer[] = [];
  const assetsDir = useTempDir('voxreel-assets-');
  const env = () => ({
    REDIS_URL: redis.url,
    QUEUE_NAME: 'scale-out-test',
    STORAGE: 's3',
    S3_BUCKET: s3.bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    S3_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    CDN_URL: s3.bucketUrl,
    ASSETS_DIR: assetsDir,
    CONCURRENCY: '1',
    API_KEYS: 'key-a,key-b',
    RATE_LIMIT_MAX: String(RATE_LIMIT),
    RATE_LIMIT_WINDOW_MS: '1000',
    // Fresh renders: the kill test must find its job running, not answered from a cache.
    CACHE_MAX_ENTRIES: '0',
    SENTENCE_CACHE_MB: '0',
  });

  beforeAll(async () => {
    [redis, s3] = await Promise.all([startRedis(), startS3()]);
    // Every one that started is kept for afterAll to stop, even when another failed to.
    const started = await Promise.allSettled([startServer(env()), startServer(env()), startWorker(env()), startWorker(env())]);
    started.forEach((result, index) => result.status === 'fulfilled' && (index < 2 ? apis : workers).push(result.value));
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }, 60_000);

  afterAll(async () => {
    await Promise.all([...apis, ...workers].map((service) => service.stop()));
    await Promise.all([redis?.stop(), s3?.stop()]);
  });

  const [first, second] = [() => apis[0] as RunningServer, () => apis[1] as RunningServer];

  async function post(api: RunningServer, url: string, body: Record<string, unknown>): Promise<Response> {
    return fetch(`${api.baseUrl}${url}`, { method: 'POST', headers: { 'content-type': 'application/json', ...KEY }, body: JSON.stringify(body) });
  }

  /** 503s with Retry-After the pollers met (a Redis slow for a moment on a loaded machine), each retried once as a client would. */
  let busyAnswers = 0;

  async function status(api: RunningServer, id: string): Promise<JobStatus> {
    let response = await fetch(`${api.baseUrl}/jobs/${id}`, { headers: KEY });
    if (response.status === 503 && response.headers.has('retry-after') && ++busyAnswers <= MAX_BUSY_ANSWERS) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      response = await fetch(`${api.baseUrl}/jobs/${id}`, { headers: KEY });
    }
    // A refusal names itself and what the API logged of it (a 503 says which dependency did not answer).
    const warnings = () => JSON.stringify(api.logs.filter((entry) => (entry.level as number) >= 40).slice(-3));
    if (response.status !== 200) expect(response.status, `${await response.text()} ${warnings()}`).toBe(200);
    return (await response.json()) as JobStatus;
  }

  async function settle(api: RunningServer, id: string, timeoutMs = 60_000): Promise<JobStatus> {
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
      const current = await status(api, id);
      if (current.state !== 'queued' && current.state !== 'running') return current;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`job ${id} did not finish in ${timeoutMs} ms`);
  }

  /** The job's data as it waits in Redis (what its runs established). */
  async function queuedData(id: string): Promise<QueuedJobData> {
    const queue = new Queue<QueuedJobData>('scale-out-test', { connection: { host: '127.0.0.1', port: redis.port } });
    try {
      return (await queue.getJob(id))?.data as QueuedJobData;
    } finally {
      await queue.close();
    }
  }

  async function objects(prefix: string): Promise<string[]> {
    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
    client.destroy();
    return (listed.Contents ?? []).map((object) => object.Key ?? '').sort();
  }

  it('a job queued on one API process is read, finished, from the other; its file is in the bucket and decodes', async () => {
    const accepted = await post(first(), '/tts-video', { text: 'Queued on one instance, read on the other.', voice: VOICE, resolution: '720p', async: true });
    expect(accepted.status).toBe(202);
    const { id } = (await accepted.json()) as { id: string };
    const done = await settle(second(), id);
    expect(done.state).toBe('succeeded');
    expect(done.result?.url).toBe(`${s3.bucketUrl}/video/${id}.mp4`);
    const download = await fetch(done.result?.url ?? '');
    expect(download.status).toBe(200);
    const file = path.join(assetsDir, `${id}.mp4`);
    await writeFile(file, Buffer.from(await download.arrayBuffer()));
    const info = await probe(file);
    expect(info.streams.map((stream) => stream.codecName).sort()).toEqual(['aac', 'h264']);
  }, 60_000);

  it('a synchronous request waits for its job in a worker and answers as the seed does', async () => {
    const response = await post(second(), '/tts', { text: 'Answered while you wait.', voice: VOICE });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { status: string; url: string; duration: number };
    expect(body.status).toBe('success');
    expect(body.url.startsWith(`${s3.bucketUrl}/audio/`)).toBe(true);
    expect((await fetch(body.url)).status).toBe(200);
  }, 30_000);

  it('a long job whose worker is killed is continued by the other from its checkpoints: the same audio, byte for byte, as a run never stopped', async () => {
    // Flite says a sentence the same every time, and fast (eSpeak NG does not: each of its runs differs a little, stopped or not).
    const request = { text: await aliceText(20_000), voice: 'flite:slt', format: 'mp3', timestamps: true, async: true };
    const accepted = await post(first(), '/tts', request);
    expect(accepted.status, await accepted.clone().text()).toBe(202);
    const { id } = (await accepted.json()) as { id: string };
    // Killed a third of the way in: its first sentences are in the bucket, the rest not yet spoken.
    let view = await status(second(), id);
    for (const deadline = Date.now() + 60_000; (view.charactersDone ?? 0) < (view.characters ?? Infinity) / 3 && Date.now() < deadline; view = await status(second(), id)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(view.state).toBe('running');
    const spokenBeforeKill = view.charactersDone as number;
    expect(spokenBeforeKill).toBeLessThan((view.characters as number) * 0.8);
    const running = workers.find((worker) => worker.logs.some((entry) => entry.msg === 'job started' && entry.job === id)) as RunningServer;
    // The only long job here: every checkpoint in the bucket is its own (kept under its request and client, hashed).
    const saved = (await objects('checkpoints/')).length;
    expect(saved).toBeGreaterThan(10);
    running.child.kill('SIGKILL');
    await running.exited;
    // The worker lost is replaced once this test ends, passed or not, for the tests after it.
    onTestFinished(async () => {
      workers.splice(workers.indexOf(running), 1, await startWorker(env()));
    });
    const survivor = workers.find((worker) => worker !== running) as RunningServer;
    // Progress as the other worker tells it never goes back to the start: it reads the spoken sentences back first.
    const after: JobStatus[] = [];
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
      const current = await status(second(), id);
      after.push(current);
      if (current.state !== 'queued' && current.state !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const done = after.at(-1) as JobStatus;
    expect(done.state, JSON.stringify(done.error)).toBe('succeeded');
    const resumed = survivor.logs.find((entry) => entry.msg?.toString().startsWith('job resumed') && entry.job === id);
    expect(resumed?.sentences).toBeGreaterThanOrEqual(saved);
    const progressAfter = after.filter((current) => current.state === 'running' && current.charactersDone !== undefined).map((current) => current.charactersDone as number);
    expect(progressAfter.every((done, index) => index === 0 || done >= (progressAfter[index - 1] as number))).toBe(true);
    // Done: its checkpoints are gone; one file under the job's name.
    expect(await objects('checkpoints/')).toEqual([]);
    expect((await objects('audio/')).filter((key) => key.includes(id))).toEqual([`audio/${id}.mp3`]);
    const interrupted = Buffer.from(await (await fetch(done.result?.url ?? '')).arrayBuffer());

    // The same request again, never stopped (nothing cached: CACHE_MAX_ENTRIES=0): the same bytes.
    const again = await post(second(), '/tts', request);
    const { id: secondId } = (await again.json()) as { id: string };
    const whole = await settle(first(), secondId, 120_000);
    expect(whole.state).toBe('succeeded');
    const uninterrupted = Buffer.from(await (await fetch(whole.result?.url ?? '')).arrayBuffer());
    expect(interrupted.length).toBeGreaterThan(100_000);
    expect(interrupted.equals(uninterrupted)).toBe(true);
    const captions = await Promise.all([done, whole].map(async (job) => (await fetch(job.result?.captionsUrl ?? '')).text()));
    expect(captions[0]).toBe(captions[1]);
  }, 240_000);

  it('a worker killed mid-job (kill -9) loses nothing: the job completes on the other, one file, no orphan process', async () => {
    const accepted = await post(first(), '/tts-video', { text: LONG_TEXT, voice: VOICE, async: true });
    const { id } = (await accepted.json()) as { id: string };
    let running: RunningServer | undefined;
    for (const deadline = Date.now() + 30_000; !running && Date.now() < deadline; ) {
      running = workers.find((worker) => worker.logs.some((entry) => entry.msg === 'job started' && entry.job === id));
      if (!running) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!running) throw new Error('no worker started the job');
    // Let it get into its work: engine hosts and ffmpeg are running for it.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect((await status(second(), id)).state).toBe('running');
    const deadlineAt = (await queuedData(id)).deadlineAt;
    expect(deadlineAt).toBeGreaterThan(Date.now());
    const children = running.children();
    expect(children.length).toBeGreaterThan(0);
    running.child.kill('SIGKILL');
    await running.exited;
    const done = await settle(second(), id, 90_000);
    expect(done.state).toBe('succeeded');
    const survivor = workers.find((worker) => worker !== running) as RunningServer;
    // The second run kept the first run's deadline: a crash does not buy a job more time.
    expect((await queuedData(id)).deadlineAt).toBe(deadlineAt);
    expect(survivor.logs.some((entry) => entry.msg === 'job started' && entry.job === id && entry.stalled === 1)).toBe(true);
    expect(survivor.logs.some((entry) => entry.msg === 'job finished' && entry.job === id && entry.outcome === 'success')).toBe(true);
    // Published once, under the job's own name: no second copy from the run that died.
    expect((await objects('video/')).filter((key) => key.includes(id))).toEqual([`video/${id}.mp4`]);
    expect(await objects('captions/')).toContain(`captions/${id}.vtt`);
    expect((await fetch(done.result?.url ?? '')).status).toBe(200);
    // Every process the killed worker had started is gone.
    const alive = new Set(processTable().map((entry) => entry.pid));
    expect(children.filter((child) => alive.has(child.pid))).toEqual([]);
  }, 150_000);

  it('rate limits are counted together: the instances share RATE_LIMIT_MAX', async () => {
    // Half of these to each instance, all within the one-second window: alone, each would let its half through.
    const requests = Array.from({ length: RATE_LIMIT + 10 }, (_, i) =>
      fetch(`${(i % 2 === 0 ? first() : second()).baseUrl}/jobs/AAAAAAAAAAAAAAAAAAAAAA`, { headers: { authorization: 'Bearer key-b' } }).then((response) => response.status),
    );
    const statuses = await Promise.all(requests);
    expect(statuses.filter((code) => code === 404).length).toBeLessThanOrEqual(RATE_LIMIT);
    expect(statuses.filter((code) => code === 429).length).toBeGreaterThanOrEqual(10);
  });
});
