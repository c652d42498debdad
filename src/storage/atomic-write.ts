import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';

export interface AtomicWriteOptions {
  /** Permissions of the new file (default 0o666 less the umask). */
  mode?: number;
  /** What a failure of the file system (not of `write`) becomes, e.g. STORAGE_FAILED. */
  fileFailure?: (cause: unknown) => never;
}

/**
 * Writes `file` whole or not at all: `write` fills (and ends) a temporary file in `tempDir`, on the same file system,
 * which is then renamed into place; on any failure the temporary file is removed and nothing appears at `file`.
 */
export async function writeAtomically(file: string, tempDir: string, write: (output: Writable) => Promise<void>, options: AtomicWriteOptions = {}): Promise<void> {
  const fileFailure = options.fileFailure ?? ((cause: unknown) => { throw cause; });
  const temp = path.join(tempDir, `${path.basename(file)}.${randomBytes(4).toString('hex')}`);
  const handle = await open(temp, 'wx', options.mode).catch(fileFailure);
  const output = handle.createWriteStream();
  // Listened to at once: a write error before the end must not go unhandled.
  const written = finished(output);
  written.catch(() => undefined);
  try {
    await write(output);
    await written.catch(fileFailure);
    await rename(temp, file).catch(fileFailure);
  } catch (error) {
    output.destroy();
    await rm(temp, { force: true });
    throw error;
  }
}

/** A `write` for `writeAtomically` that writes `content` and ends. */
export function content(text: string): (output: Writable) => Promise<void> {
  return async (output) => void output.end(text);
}
