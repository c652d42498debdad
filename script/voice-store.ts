import { createHash, randomBytes } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { access, mkdir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { VoiceError } from './voice-errors.js';

/** A Piper voice in VOICES_DIR is `<name>.onnx` (the model) plus `<name>.onnx.json` (its config). */
export type VoiceFileRole = 'model' | 'config';
/** The order files are published in: the config last, so that the engine never sees a voice without its model. */
export const VOICE_FILE_ROLES: readonly VoiceFileRole[] = ['model', 'config'];

const VOICE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

export function checkVoiceName(name: string): void {
  if (!VOICE_NAME.test(name)) {
    throw new VoiceError('BAD_NAME', `"${name}" is not a voice name (letters, digits, _ and -, e.g. en_US-lessac-medium)`);
  }
}

export function voiceFileName(name: string, role: VoiceFileRole): string {
  return role === 'model' ? `${name}.onnx` : `${name}.onnx.json`;
}

export interface FileDigest {
  size: number;
  sha256: string;
  md5: string;
}

export async function digestFile(file: string): Promise<FileDigest> {
  const sha256 = createHash('sha256');
  const md5 = createHash('md5');
  let size = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    sha256.update(chunk);
    md5.update(chunk);
    size += chunk.length;
  }
  return { size, sha256: sha256.digest('hex'), md5: md5.digest('hex') };
}

/** What a file must be, as one authority (the catalog, the lock file) states it. */
export interface Expectation {
  authority: string;
  size?: number;
  sha256?: string;
  md5?: string;
}

/** Throws unless the file has a digest to be checked against and matches every expectation. */
export function checkFile(fileName: string, actual: FileDigest, expectations: readonly Expectation[]): void {
  if (!expectations.some((expected) => expected.sha256 || expected.md5)) {
    throw new VoiceError('INTEGRITY', `${fileName}: no published digest to check it against`);
  }
  for (const expected of expectations) {
    if (expected.size !== undefined && actual.size !== expected.size) {
      throw new VoiceError(
        'INTEGRITY',
        `${fileName}: ${actual.size} bytes where ${expected.authority} says ${expected.size} (a partial or different file)`,
      );
    }
    for (const algorithm of ['sha256', 'md5'] as const) {
      const digest = expected[algorithm];
      if (digest && actual[algorithm] !== digest) {
        throw new VoiceError('INTEGRITY', `${fileName}: ${algorithm} ${actual[algorithm]} where ${expected.authority} says ${digest}`);
      }
    }
  }
}

export type VoiceFiles<T> = Record<VoiceFileRole, T>;

/**
 * Fills temporary files in `dir` (the caller's `fill` writes them and says what they should be), checks each
 * against those statements and `pinned`, runs `beforePublish`, then renames them into place, config last.
 * Whatever fails, the temporary files are removed: a partial or corrupt download never becomes a voice.
 */
export async function installVoice(
  dir: string,
  name: string,
  fill: (targets: VoiceFiles<string>) => Promise<Partial<VoiceFiles<Expectation>>>,
  pinned: Partial<VoiceFiles<Expectation>>,
  beforePublish: (digests: VoiceFiles<FileDigest>) => Promise<void>,
): Promise<VoiceFiles<FileDigest>> {
  await mkdir(dir, { recursive: true });
  await access(dir, constants.W_OK); // before a long download, not after it
  const tag = randomBytes(4).toString('hex');
  const temporary = (role: VoiceFileRole) => path.join(dir, `.${voiceFileName(name, role)}.${tag}.part`);
  const targets: VoiceFiles<string> = { model: temporary('model'), config: temporary('config') };
  try {
    const stated = await fill(targets);
    const digests = {} as VoiceFiles<FileDigest>;
    for (const role of VOICE_FILE_ROLES) {
      digests[role] = await digestFile(targets[role]);
      const expectations = [stated[role], pinned[role]].filter((expected) => expected !== undefined);
      checkFile(voiceFileName(name, role), digests[role], expectations);
    }
    await beforePublish(digests);
    for (const role of VOICE_FILE_ROLES) await rename(targets[role], path.join(dir, voiceFileName(name, role)));
    return digests;
  } finally {
    await Promise.all(VOICE_FILE_ROLES.map((role) => rm(targets[role], { force: true })));
  }
}

export interface VoiceOnDisk {
  name: string;
  /** A voice is installed when both files are there; one alone is an interrupted install or removal. */
  files: Partial<VoiceFiles<FileDigest>>;
}

/** The voices in `dir` (complete or not), by name, with their files' sizes and digests. */
export async function scanVoices(dir: string): Promise<VoiceOnDisk[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const names = new Set<string>();
  for (const entry of entries) {
    const name = entry.replace(/\.onnx(\.json)?$/, '');
    if (name !== entry && VOICE_NAME.test(name)) names.add(name);
  }
  const voices: VoiceOnDisk[] = [];
  for (const name of [...names].sort()) voices.push(await findVoice(dir, name));
  return voices;
}

/** One voice's files in `dir`, those that are there, with their sizes and digests. */
export async function findVoice(dir: string, name: string): Promise<VoiceOnDisk> {
  const files: Partial<VoiceFiles<FileDigest>> = {};
  for (const role of VOICE_FILE_ROLES) {
    try {
      files[role] = await digestFile(path.join(dir, voiceFileName(name, role)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return { name, files };
}

/** Removes a voice (config first, so it stops being listed at once), any temporary files of its installs, and what is remembered of its model. */
export async function removeVoice(dir: string, name: string): Promise<boolean> {
  let removed = false;
  for (const role of [...VOICE_FILE_ROLES].reverse()) {
    try {
      await rm(path.join(dir, voiceFileName(name, role)));
      removed = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  const entries = await readdir(dir).catch(() => []);
  const leftovers = entries.filter((entry) => entry.startsWith(`.${name}.onnx`) && (entry.endsWith('.part') || entry.endsWith('.durations.json')));
  await Promise.all(leftovers.map((entry) => rm(path.join(dir, entry), { force: true })));
  return removed;
}
