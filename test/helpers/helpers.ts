import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import type { TtsResponse } from '../../src/api/speech.js';
import { buildApp, type AppDeps } from '../../src/app/build.js';
import { loadConfig, type Config } from '../../src/config.js';

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
  const config = loadConfig({ OUTPUT_DIR: outputDir, LOG_LEVEL: 'silent', CONCURRENCY: '2', RATE_LIMIT_MAX: '0', WARM_VOICE: 'none', ...env });
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

/**
 * One app for the tests of this file (or describe block): built before them, closed after them.
 * Each member reads the built app, so use them inside the tests and hooks, not while they are declared.
 */
export function useTestApp(env: Record<string, string> = {}, deps: AppDeps = {}): TestApp {
  let built: TestApp | undefined;
  beforeAll(async () => {
    built = await buildTestApp(env, deps);
  });
  afterAll(async () => built?.close());
  const current = (): TestApp => {
    if (!built) throw new Error('The test app is built in beforeAll: use it inside the tests.');
    return built;
  };
  return {
    get app() {
      return current().app;
    },
    get config() {
      return current().config;
    },
    get outputDir() {
      return current().outputDir;
    },
    listFiles: () => current().listFiles(),
    fetchFile: (url) => current().fetchFile(url),
    close: () => current().close(),
  };
}

async function listFilesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** POST /tts that must succeed; returns the parsed answer. */
export async function postTts(app: FastifyInstance, body: Record<string, unknown>): Promise<TtsResponse> {
  const response = await app.inject({ method: 'POST', url: '/tts', payload: body });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<TtsResponse>();
}

export interface FormPart {
  name: string;
  filename?: string;
  type?: string;
  content: Buffer | string;
}

/** A multipart/form-data body, built by hand as a browser would send it. */
export function multipartForm(parts: FormPart[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----voxreel-${randomBytes(8).toString('hex')}`;
  const chunks = parts.flatMap(({ name, filename, type, content }) => [
    Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}\r\n` +
        `${type === undefined ? '' : `content-type: ${type}\r\n`}\r\n`,
    ),
    Buffer.from(content),
    Buffer.from('\r\n'),
  ]);
  return {
    payload: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

/** Uploads a file with POST /assets (as the default client) and gives the new asset's id; anything but 201 fails the test. */
export async function uploadAsset(app: FastifyInstance, file: string): Promise<string> {
  const form = multipartForm([{ name: 'file', filename: path.basename(file), content: await readFile(file) }]);
  const asset = await app.inject({ method: 'POST', url: '/assets', payload: form.payload, headers: form.headers });
  expect(asset.statusCode, asset.body).toBe(201);
  return asset.json<{ id: string }>().id;
}
