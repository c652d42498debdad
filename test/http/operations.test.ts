import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ONNXRUNTIME_LIBRARY, PYPI_ONNXRUNTIME_VERSION } from '../../src/engines/onnx/runtime.js';
import { buildTestApp, postTts, useTestApp } from '../helpers/helpers.js';

/**
 * What Piper's voices run on, when they are installed: PyPI's ONNX Runtime where script/setup put it, and the
 * native eSpeak NG (script/setup installs it; under CI it must be there) else the WebAssembly build.
 */
const onnxruntime = existsSync('voices/en_US-joe-medium.onnx')
  ? {
      onnxruntime: existsSync(DEFAULT_ONNXRUNTIME_LIBRARY) ? PYPI_ONNXRUNTIME_VERSION : '1.30.0',
      phonemes: process.env.CI ? 'espeak-ng native' : expect.stringMatching(/^espeak-ng (native|webassembly)$/),
    }
  : {};

const t = useTestApp();

describe('operations routes', () => {
  it('/healthz and /readyz report a ready service', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    // The splicer's check runs after start-up's warm-up, in the background: shown once it has run.
    await t.app.splicer.run();
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({
      status: 'ok',
      checks: { voices: true, warm: true, ffmpeg: true, outputWritable: true, diskSpace: true, splicer: true },
      ...onnxruntime,
    });
  });

  it('/readyz answers 503 when free disk space falls below MIN_FREE_DISK_MB', async () => {
    // More than any disk here has free: the floor is what is tested, not this machine's disk.
    const full = await buildTestApp({ MIN_FREE_DISK_MB: String(1024 * 1024 * 1024) }, { engines: t.app.engines });
    try {
      const ready = await full.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ status: 'unavailable', checks: { diskSpace: false, outputWritable: true } });
    } finally {
      await full.close();
    }
  });

  it('/readyz answers 503 when ffmpeg cannot be found', async () => {
    const broken = await buildTestApp({}, { engines: t.app.engines, tools: { ffmpeg: '/nonexistent/ffmpeg', ffprobe: '/nonexistent/ffprobe' } });
    try {
      const ready = await broken.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ status: 'unavailable', checks: { ffmpeg: false, voices: true } });
    } finally {
      await broken.close();
    }
  });

  it('/metrics exposes requests, latency, queue, running jobs, job durations and engine failures', async () => {
    await postTts(t.app, { text: 'Counted.', voice: 'espeak-ng:en-us' });
    await t.app.inject({ method: 'POST', url: '/tts', payload: { voice: 'espeak-ng:en-us' } });
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/voxreel_http_requests_total\{route="\/tts",method="POST",status="200"\} 1/);
    expect(metrics).toMatch(/voxreel_http_requests_total\{route="\/tts",method="POST",status="400"\} 1/);
    expect(metrics).toMatch(/voxreel_http_request_duration_seconds_bucket\{le="[\d.]+",route="\/tts",method="POST"\}/);
    expect(metrics).toMatch(/voxreel_queue_depth 0/);
    expect(metrics).toMatch(/voxreel_jobs_running 0/);
    expect(metrics).toMatch(/voxreel_job_duration_seconds_count\{operation="tts",outcome="success"\} 1/);
    expect(metrics).toMatch(/# TYPE voxreel_engine_failures_total counter/);
    expect(metrics).toMatch(/voxreel_process_resident_memory_bytes \d+/);
  });

  it('/docs serves the OpenAPI document built from the request schemas', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/docs' })).statusCode).toBeLessThan(400);
    const document = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      openapi: string;
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, { maxLength?: number; description?: string }> } }> } }>>;
    }>();
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/tts', '/tts-video', '/voices', '/v1/audio/speech', '/healthz']));
    const ttsBody = document.paths['/tts']?.post?.requestBody?.content['application/json']?.schema;
    // A long job's limit in the schema; the 5000 a request answered at once takes, in its description (and checked by the use case).
    expect(ttsBody?.properties.text?.maxLength).toBe(100_000);
    expect(ttsBody?.properties.text?.description).toMatch(/1 to 5000 characters; up to 100000 in an asynchronous job/);
  });
});
