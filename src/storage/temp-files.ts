import { randomBytes } from 'node:crypto';
import { readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FileKind, PendingFile, StoredFile } from './storage.js';

/** A temporary file this old was abandoned (no job lasts a day); younger ones may still be written. */
export const STALE_TEMP_MS = 24 * 3_600_000;

/** A temporary file's name: unique among concurrent writers of the same name, its real extension last for ffmpeg. */
export function tempFileName(kind: FileKind, name: string, extension: string): string {
  return `${kind}-${name}.${randomBytes(4).toString('hex')}.${extension}`;
}

/**
 * A file written at `tempPath` that `publish` takes to its place. Once committed or discarded the temporary file is
 * gone, whether publishing worked or not (a leftover would only be found by the next day's sweep).
 */
export function pendingFile(tempPath: string, publish: (signal?: AbortSignal) => Promise<StoredFile>): PendingFile {
  let settled = false;
  const remove = () => rm(tempPath, { force: true });
  return {
    path: tempPath,
    write: (content) => writeFile(tempPath, content),
    commit: async (signal) => {
      settled = true;
      try {
        return await publish(signal);
      } finally {
        // The file is published (or not) already: failing to tidy up must not turn that into an error.
        await remove().catch(() => undefined);
      }
    },
    discard: async () => {
      if (settled) return;
      settled = true;
      await remove();
    },
  };
}

/** Removes the regular files in `folder` last written more than maxAgeMs ago; returns how many. */
export async function removeOlderThan(folder: string, maxAgeMs: number): Promise<number> {
  const cutoff = Date.now() - maxAgeMs;
  let removed = 0;
  for (const name of await readdir(folder).catch(() => [] as string[])) {
    const file = path.join(folder, name);
    const info = await stat(file).catch(() => undefined);
    if (info?.isFile() && info.mtimeMs < cutoff) {
      await rm(file, { force: true });
      removed += 1;
    }
  }
  return removed;
}
