import { statfs } from 'node:fs/promises';

/** Bytes an unprivileged process may still write on the file system holding `folder` (0 when it cannot be read). */
export function freeBytes(folder: string): Promise<number> {
  return statfs(folder).then((info) => info.bavail * info.bsize, () => 0);
}

/** Whether every folder given has at least `minimum` bytes free. */
export async function enoughSpace(folders: ReadonlyArray<string | undefined>, minimum: number): Promise<boolean> {
  const free = await Promise.all(folders.flatMap((folder) => (folder === undefined ? [] : [freeBytes(folder)])));
  return free.every((bytes) => bytes >= minimum);
}
