import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEngines, type EngineRegistry } from '../../src/engines/index.js';
import type { ErrorBody } from '../../src/api/errors.js';
import { buildTestApp, type TestApp } from '../helpers/helpers.js';
import { ffmpeg } from '../helpers/media.js';
import { processesMatching } from '../helpers/process-table.js';

const fakeFfmpeg = path.resolve('fixtures/fake-ffmpeg.mjs');

/** Processes running the fake ffmpeg, wherever they were reparented. */
const fakeFfmpegProcesses = () => processesMatching(fakeFfmpeg);

let engines: EngineRegistry;
let t: TestApp;
beforeAll(async () => {
  engines = await createEngines({ poolSize: 1, jobTimeoutMs: 30_000 });
  // Its host started now, not by the first request: that one's 4 s deadline is for the faulty ffmpeg alone (and room
  // for a machine busy with another test file: a well-behaved run takes under a second).
  await engines.synthesize('espeak-ng:en-us', 'Warm.');
  process.env.REAL_FFMPEG = ffmpeg.tools.ffmpeg;
  t = await buildTestApp({ TTS_TIMEOUT_MS: '4000', VIDEO_TIMEOUT_MS: '4000', TIMEOUT_MS_PER_CHARACTER: '0' }, { engines, tools: { ffmpeg: fakeFfmpeg, ffprobe: ffmpeg.tools.ffprobe } });
  // The splicer's self-check runs in the background after start-up, through this (well-behaved until told otherwise)
  // ffmpeg: done before the faults begin, so none of its runs is taken for a request's.
  await t.app.splicer.run();
});
afterAll(async () => {
  await t?.close();
  await engines?.close();
});
afterEach(() => {
  delete process.env.FAKE_FFMPEG;
});

async function speakWith(mode: string) {
  process.env.FAKE_FFMPEG = mode;
  // A loudness target: ffmpeg's path (short speech without one is encoded in process, by no ffmpeg at all).
  const payload = { text: 'Faults are contained.', voice: 'espeak-ng:en-us', loudness: -16 };
  const response = await t.app.inject({ method: 'POST', url: '/tts', payload });
  return { response, body: response.json<ErrorBody>() };
}

describe('a misbehaving ffmpeg fails only its request', () => {
  it.each([
    ['hang', 504, 'JOB_TIMEOUT'],
    ['stubborn', 504, 'JOB_TIMEOUT'],
    ['crash', 502, 'MEDIA_FAILED'],
    ['garbage', 502, 'MEDIA_FAILED'],
  ])('%s → %i %s, no orphan, no file', async (mode, status, code) => {
    const { response, body } = await speakWith(mode);
    expect(response.statusCode, response.body).toBe(status);
    expect(body.error.code).toBe(code);
    expect(body.error.message).not.toMatch(/fake-ffmpeg|SIGSEGV/); // causes stay in the log
    // the stubborn one ignores SIGTERM and needs the SIGKILL escalation (2 s)
    await expect.poll(fakeFfmpegProcesses, { timeout: 5000 }).toEqual([]);
    expect(await t.listFiles()).toEqual([]);
  });
});

describe('a misbehaving ffmpeg fails only its video request', () => {
  it.each([
    ['hang', 504, 'JOB_TIMEOUT'],
    ['crash', 502, 'MEDIA_FAILED'],
    ['garbage', 502, 'MEDIA_FAILED'],
  ])('%s → %i %s, no orphan, neither the video nor its captions left behind', async (mode, status, code) => {
    process.env.FAKE_FFMPEG = mode;
    const response = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { text: 'Faults are contained.', voice: 'espeak-ng:en-us' } });
    expect(response.statusCode, response.body).toBe(status);
    expect(response.json<ErrorBody>().error.code).toBe(code);
    await expect.poll(fakeFfmpegProcesses, { timeout: 5000 }).toEqual([]);
    expect(await t.listFiles()).toEqual([]);
  });
});

describe('after the faults', () => {
  it('serves the next request normally', async () => {
    const healthy = await buildTestApp({}, { engines });
    try {
      const response = await healthy.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Back to normal.', voice: 'espeak-ng:en-us' } });
      expect(response.statusCode, response.body).toBe(200);
    } finally {
      await healthy.close();
    }
  });
});
