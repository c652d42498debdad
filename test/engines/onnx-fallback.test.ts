// Piper's hosts on either ONNX Runtime: PyPI's 1.32 (installed by script/setup) and onnxruntime-node's 1.30, the
// fallback where that library is missing. Noise scales 0 make both speak deterministically, so their audio compares.
import { existsSync } from 'node:fs';
import { copyFile, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpeechChunk } from '../../src/engines/types.js';
import { PiperEngine } from '../../src/engines/piper/engine.js';
import { DEFAULT_ONNXRUNTIME_LIBRARY, PYPI_ONNXRUNTIME_VERSION } from '../../src/engines/onnx/runtime.js';
import { useTempDir } from '../helpers/temp-dir.js';

const MODEL = fileURLToPath(new URL('../../voices/en_US-joe-medium.onnx', import.meta.url));
const installed = existsSync(DEFAULT_ONNXRUNTIME_LIBRARY) && existsSync(MODEL) && existsSync(`${MODEL}.json`);
const run = installed || Boolean(process.env.CI);
if (!installed) console.warn(`onnx-fallback.test.ts skipped: ${DEFAULT_ONNXRUNTIME_LIBRARY} or ${MODEL} is missing; script/setup installs both.`);

const VOICE = 'piper:en_US-joe-medium';
const TEXT = 'The quick brown fox jumps over the lazy dog. Then it rests in the warm afternoon sun.';

/** Joe with its noise scales at 0: the same ids give the same audio on every run. */
async function quietVoices(dir: string): Promise<void> {
  await symlink(MODEL, path.join(dir, 'en_US-joe-medium.onnx'));
  const config = JSON.parse(await readFile(`${MODEL}.json`, 'utf8')) as { inference: Record<string, number> };
  config.inference = { ...config.inference, noise_scale: 0, noise_w: 0 };
  await writeFile(path.join(dir, 'en_US-joe-medium.onnx.json'), JSON.stringify(config));
}

/** The difference's energy against the signal's, in dB (higher: closer). */
function signalToDifference(a: Int16Array, b: Int16Array): number {
  let signal = 0;
  let difference = 0;
  for (let i = 0; i < a.length; i++) {
    signal += (a[i] as number) ** 2;
    difference += ((a[i] as number) - (b[i] as number)) ** 2;
  }
  return 10 * Math.log10(signal / Math.max(difference, 1));
}

/** The rejection's messages, its causes' included (the engine's error wraps the host's). */
async function failure(promise: Promise<unknown>): Promise<string> {
  const messages: string[] = [];
  for (let error: unknown = await promise.then(() => undefined, (reason: unknown) => reason); error instanceof Error; error = error.cause) messages.push(error.message);
  return messages.join(' <- ');
}

describe.runIf(run)('Piper on ONNX Runtime 1.32, and on onnxruntime-node where it is missing', () => {
  const voicesDir = useTempDir('voxreel-onnx-voices-');
  const warnings: { obj: object; msg: string }[] = [];
  const log = { warn: (obj: object, msg: string) => warnings.push({ obj, msg }) };
  let pypi: PiperEngine;
  let npm: PiperEngine;
  let pypiSpeech: SpeechChunk;
  let npmSpeech: SpeechChunk;

  beforeAll(async () => {
    await quietVoices(voicesDir);
    pypi = await PiperEngine.create({ voicesDir, poolSize: 2, log });
    npm = await PiperEngine.create({ voicesDir, poolSize: 2, log, onnxRuntimeLibrary: path.join(voicesDir, 'no', 'libonnxruntime.so.1.32.0') });
    pypiSpeech = await pypi.synthesize(VOICE, TEXT);
    npmSpeech = await npm.synthesize(VOICE, TEXT);
  });

  afterAll(async () => {
    await Promise.all([pypi?.close(), npm?.close()]);
  });

  it('runs on 1.32 from PyPI where script/setup installed it, and says nothing of it', async () => {
    expect(await pypi.onnxRuntime()).toEqual({ version: PYPI_ONNXRUNTIME_VERSION, source: 'pypi', fallback: null });
    expect(warnings.filter(({ msg }) => !msg.includes('onnxruntime-node'))).toEqual([]);
  });

  it("falls back to onnxruntime-node's 1.30 when the library is missing, and says why once", async () => {
    const runtime = await npm.onnxRuntime();
    expect(runtime).toMatchObject({ version: '1.30.0', source: 'npm' });
    expect(runtime?.fallback).toMatch(/no[/\\]libonnxruntime\.so\.1\.32\.0 is not installed; script\/setup installs ONNX Runtime 1\.32\.0/);
    await npm.onnxRuntime();
    await npm.hostStats();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toBe(`Piper runs on onnxruntime-node's ONNX Runtime 1.30.0: ${runtime?.fallback}`);
  });

  it('both speak the same audio, within rounding', () => {
    expect(npmSpeech.sampleRate).toBe(pypiSpeech.sampleRate);
    expect(pypiSpeech.samples.length).toBeGreaterThan(pypiSpeech.sampleRate * 3);
    expect(npmSpeech.samples.length).toBe(pypiSpeech.samples.length);
    // Measured 90 dB apart (at most 1 in 32768 on a sample); another sentence is about -1 dB.
    expect(signalToDifference(pypiSpeech.samples, npmSpeech.samples)).toBeGreaterThan(60);
    expect(npmSpeech.words?.map((word) => word.word)).toEqual(pypiSpeech.words?.map((word) => word.word));
  });

  // A host answers a failed job (the engine then replaces it once its other jobs are done, its policy for any failure).
  it("a corrupt or missing model fails its job with the error the host answered, never a crash, and the next job speaks", async () => {
    const dir = useTempDir('voxreel-onnx-corrupt-');
    const model = path.join(dir, 'en_US-joe-medium.onnx');
    await copyFile(MODEL, model);
    await copyFile(path.join(voicesDir, 'en_US-joe-medium.onnx.json'), `${model}.json`);
    const engine = await PiperEngine.create({ voicesDir: dir, poolSize: 1, warm: 0 });
    try {
      // Spoilt after the catalog read it, before the host loads it.
      const bytes = await readFile(model);
      bytes.fill(0xff, 64);
      await writeFile(model, bytes);
      const corrupt = await failure(engine.synthesize(VOICE, TEXT));
      expect(corrupt).toMatch(/failed: Failed to load model because protobuf parsing failed/);
      await rm(model);
      const missing = await failure(engine.synthesize(VOICE, TEXT));
      expect(missing).toMatch(/failed: ENOENT/);
      for (const message of [corrupt, missing]) expect(message).not.toMatch(/exited during a job|stopped answering|signal/);
      await copyFile(MODEL, model);
      const speech = await engine.synthesize(VOICE, TEXT);
      expect(speech.samples.length).toBe(pypiSpeech.samples.length);
    } finally {
      await engine.close();
    }
  });
});
