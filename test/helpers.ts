import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import type { TtsResponse } from '../src/http/schemas.js';
import { buildApp, type AppDeps } from '../src/http/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { Ffmpeg, type MediaInfo } from '../src/media/ffmpeg.js';
import { resolveMediaTools } from '../src/media/tools.js';
import { runProcess } from '../src/media/process.js';

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  outputDir: string;
  /** Every file under OUTPUT_DIR (temporary ones included), relative to it. */
  listFiles(): Promise<string[]>;
  /** Reads a served file back through the app, given its public URL. */
  fetchFile(url: string): Promise<{ statusCode: number; headers: Record<string, unknown>; body: Buffer }>;
  close(): Promise<void>;
}

/** The whole app on real engines and ffmpeg, writing into a fresh temporary OUTPUT_DIR. */
export async function buildTestApp(env: Record<string, string> = {}, deps: AppDeps = {}): Promise<TestApp> {
  const outputDir = await mkdtemp(path.join(os.tmpdir(), 'voxreel-test-'));
  const config = loadConfig({ OUTPUT_DIR: outputDir, LOG_LEVEL: 'silent', CONCURRENCY: '2', RATE_LIMIT_MAX: '0', ...env });
  const app = await buildApp(config, { logger: false, ...deps });
  await app.ready();
  return {
    app,
    config,
    outputDir,
    listFiles: () => listFilesUnder(outputDir),
    fetchFile: async (url) => {
      const response = await app.inject({ method: 'GET', url: new URL(url).pathname });
      return { statusCode: response.statusCode, headers: response.headers, body: response.rawPayload };
    },
    close: async () => {
      await app.close();
      await rm(outputDir, { recursive: true, force: true });
    },
  };
}

async function listFilesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .sort();
}

export const ffmpeg = new Ffmpeg(resolveMediaTools());

export function probe(file: string): Promise<MediaInfo> {
  return ffmpeg.probe(file);
}

/** Loudness of a decoded audio file: mean volume in dBFS as ffmpeg's volumedetect reads it (-91 is digital silence). */
export async function meanVolume(file: string): Promise<number> {
  const { stderr } = await runProcess(ffmpeg.tools.ffmpeg, ['-hide_banner', '-nostdin', '-i', file, '-map', '0:a:0', '-af', 'volumedetect', '-f', 'null', '-'], {
    timeoutMs: 30_000,
  });
  const match = /mean_volume:\s*(-?[\d.]+) dB/.exec(stderr);
  if (!match?.[1]) throw new Error(`volumedetect printed no mean volume:\n${stderr}`);
  return Number(match[1]);
}

/** POST /tts that must succeed; returns the parsed answer. */
export async function postTts(app: FastifyInstance, body: Record<string, unknown>): Promise<TtsResponse> {
  const response = await app.inject({ method: 'POST', url: '/tts', payload: body });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<TtsResponse>();
}
