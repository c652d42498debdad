import { spawn, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildState } from '../../script/build-state.mjs';
import { startRedis, type RunningRedis } from '../helpers/redis-server.js';
import { startServer, startWorker, type RunningServer } from '../helpers/server-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Busy loops on every core: a machine whose processes start slowly. */
function cpuHog(): ChildProcess[] {
  return cpus().map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

async function readyz(api: RunningServer, timeoutMs: number): Promise<{ status: number; body: Record<string, unknown> }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`${api.baseUrl}/readyz`);
    const answer = { status: response.status, body: (await response.json()) as Record<string, unknown> };
    if (answer.status === 200 || Date.now() > until) return answer;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The compiled build as `npm start` and `voxreel worker` run it: two APIs and two workers started at once while every
 * core is taken by a busy loop (where, run from the source with a loader in every engine host, they crashed at start).
 */
describe('four voxreel processes started at once on a busy machine', () => {
  const outputDir = useTempDir('voxreel-first-minute-');
  let redis: RunningRedis | undefined;
  let hog: ChildProcess[] = [];
  const services: RunningServer[] = [];
  afterAll(async () => {
    for (const child of hog) child.kill('SIGKILL');
    await Promise.all(services.map((service) => service.stop()));
    await redis?.stop();
  });

  it('all come up, the start-up voice warm, and serve', async () => {
    expect(buildState(root), 'the compiled build is older than src/: run `npm run build` (script/setup does it)').toBe('fresh');
    redis = await startRedis();
    const env = {
      REDIS_URL: redis.url,
      QUEUE_NAME: 'first-minute-test',
      OUTPUT_DIR: outputDir,
      CDN_URL: 'http://127.0.0.1:9/files',
      WARM_VOICE: 'auto',
      CONCURRENCY: '1',
      RATE_LIMIT_MAX: '0',
    };
    hog = cpuHog();
    const options = { build: 'compiled' as const, timeoutMs: 240_000 };
    const started = await Promise.allSettled([startServer(env, options), startServer(env, options), startWorker(env, options), startWorker(env, options)]);
    for (const result of started) if (result.status === 'fulfilled') services.push(result.value);
    expect(started.map((result) => (result.status === 'fulfilled' ? 'up' : String(result.reason)))).toEqual(['up', 'up', 'up', 'up']);

    const apis = services.filter((service) => service.baseUrl !== '');
    for (const api of apis) {
      const ready = await readyz(api, 120_000);
      expect(ready.status, JSON.stringify(ready.body)).toBe(200);
      // `auto`: Piper's joe (setup installs it), passing over Kokoro, whose model takes a second and 120 MB more.
      expect(ready.body.warmVoice).toBe('piper:en_US-joe-medium');
      expect(ready.body.unavailable).toBeUndefined();
    }
    for (const child of hog) child.kill('SIGKILL');
    const response = await fetch(`${apis[0]?.baseUrl}/tts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Four processes, all ready.', voice: 'espeak-ng:en-us', format: 'wav' }),
    });
    expect(response.status).toBe(200);
    expect(path.basename(((await response.json()) as { url: string }).url)).toMatch(/\.wav$/);
  }, 600_000);
});
