import { readdir } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { ffmpegPids } from '../helpers/media.js';
import { isAlive } from '../helpers/process-table.js';
import { startServer, type RunningServer } from '../helpers/server-process.js';

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const LONG_TEXT = 'A graceful shutdown lets this sentence finish before the process exits. '.repeat(30);

async function postTts(baseUrl: string, text: string): Promise<Response> {
  return fetch(`${baseUrl}/tts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text, voice: 'espeak-ng:en-us' }),
  });
}

async function metricsOf(running: RunningServer): Promise<string> {
  return (await fetch(`${running.baseUrl}/metrics`)).text();
}

async function jobsRunning(running: RunningServer): Promise<number> {
  return Number(/^voxreel_jobs_running (\d+)$/m.exec(await metricsOf(running))?.[1]);
}

describe('graceful shutdown', () => {
  it('finishes in-flight work, refuses new requests, exits cleanly and leaves no child behind', async () => {
    server = await startServer({ SHUTDOWN_GRACE_MS: '20000' });
    const inFlight = postTts(server.baseUrl, LONG_TEXT);
    await expect.poll(() => jobsRunning(server!), { timeout: 5000 }).toBe(1);
    const children = server.children().map(({ pid }) => pid);
    expect(children.length).toBeGreaterThan(0);
    server.child.kill('SIGTERM');
    await expect.poll(() => server!.logs.some((entry) => entry.msg === 'closing'), { timeout: 5000 }).toBe(true);
    await expect(postTts(server.baseUrl, 'Too late.')).rejects.toThrow();
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    await expect.poll(() => children.filter(isAlive), { timeout: 5000 }).toEqual([]);
  });
});

describe('a client that disconnects', () => {
  it('cancels its job: processes killed, temporary files removed, nothing published', async () => {
    server = await startServer({});
    const controller = new AbortController();
    const request = fetch(`${server.baseUrl}/tts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Speech synthesis turns text into sound. '.repeat(125), voice: 'espeak-ng:en-us', format: 'ogg' }),
      signal: controller.signal,
    });
    await expect.poll(() => jobsRunning(server!), { timeout: 5000 }).toBe(1);
    controller.abort();
    await expect(request).rejects.toThrow();
    await expect.poll(() => ffmpegPids(server!.children()), { timeout: 5000 }).toEqual([]);
    await expect
      .poll(() => metricsOf(server!), { timeout: 5000 })
      .toMatch(/voxreel_job_duration_seconds_count\{operation="tts",outcome="CLIENT_CLOSED"\} 1/);
    expect(await readdir(`${server.outputDir}/.tmp`)).toEqual([]);
    expect(await readdir(`${server.outputDir}/audio`)).toEqual([]);
  });
});

describe('overload', () => {
  it('at four times capacity answers only 200, 429 or 503, stays up with bounded memory, and stops by itself', async () => {
    server = await startServer({ CONCURRENCY: '1', QUEUE_LENGTH: '1', RATE_LIMIT_MAX: '30', RATE_LIMIT_WINDOW_MS: '60000' });
    const capacity = 2;
    const rounds = 3;
    const statuses: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const responses = await Promise.all(
        Array.from({ length: capacity * 4 }, () => postTts(server!.baseUrl, 'Overload is answered fast and honestly.')),
      );
      for (const response of responses) {
        statuses.push(response.status);
        if (response.status === 503) expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
        await response.arrayBuffer();
      }
    }
    expect(statuses.every((status) => [200, 429, 503].includes(status))).toBe(true);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(capacity);
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(0);
    const health = await fetch(`${server.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    const metrics = await metricsOf(server);
    const rss = Number(/^voxreel_process_resident_memory_bytes (\d+)/m.exec(metrics)?.[1]);
    expect(rss).toBeGreaterThan(0);
    expect(rss).toBeLessThan(512 * 1024 * 1024);
    expect(metrics).toMatch(/voxreel_http_requests_total\{route="\/tts",method="POST",status="503"\} \d+/);
  });
});

describe('start-up', () => {
  it('fails fast, in one line naming the fix, when ffmpeg cannot do what voxreel needs; never reports ready', async () => {
    // A program that runs but is no ffmpeg (node itself), and one that does not exist.
    const cases: Array<Record<string, string>> = [{ FFMPEG_PATH: process.execPath }, { FFMPEG_PATH: '/nonexistent/ffmpeg', FFPROBE_PATH: '/nonexistent/ffprobe' }];
    for (const env of cases) {
      const error = await startServer(env).then(
        async (started) => {
          await started.stop();
          return undefined;
        },
        (failure: unknown) => failure as Error,
      );
      expect(error?.message).toMatch(/server exited with 1 before listening/);
      const lines = error!.message.split('\n').filter((line) => line.startsWith('voxreel'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`${env.FFMPEG_PATH} does not run as ffmpeg`);
      expect(lines[0]).toContain('script/setup');
    }
  });
});
