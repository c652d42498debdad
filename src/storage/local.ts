import { randomBytes } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import { access, constants, mkdir, readdir, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FILE_KINDS, type FileKind, type PendingFile, type Storage } from './storage.js';

const TEMP_DIR = '.tmp';
/** A temporary file this old was abandoned (no job lasts a day); younger ones may still be written. */
const STALE_TEMP_MS = 24 * 3_600_000;

/** Files in a local directory that this service, or any web server or CDN, serves as `baseUrl`. */
export class LocalStorage implements Storage {
  constructor(
    readonly root: string,
    readonly baseUrl: string,
  ) {
    this.realRoot = path.resolve(root);
  }

  get localDir(): string {
    return this.root;
  }

  private realRoot: string;

  /** Creates the folders and removes temporary files an earlier process left behind (one process per OUTPUT_DIR). */
  async init(): Promise<void> {
    await rm(path.join(this.root, TEMP_DIR), { recursive: true, force: true });
    await Promise.all([TEMP_DIR, ...FILE_KINDS].map((dir) => mkdir(path.join(this.root, dir), { recursive: true })));
    this.realRoot = await realpath(this.root);
  }

  /**
   * Whether a request path (decoded, relative to the root) may be served: a published kind's folder, nothing
   * hidden, and, symlinks resolved, a regular file right inside a published folder (not in `.tmp`, not in the root,
   * not elsewhere). Missing files pass, to be answered 404.
   */
  isServable(requestPath: string): boolean {
    const relative = requestPath.replace(/^\/+/, '');
    const [kind, ...rest] = relative.split('/');
    if (!FILE_KINDS.includes(kind as FileKind) || rest.length !== 1 || /[\0\\]|^\./.test(rest[0] ?? '.')) return false;
    try {
      const real = realpathSync(path.join(this.root, relative));
      const [realKind, name, ...deeper] = path.relative(this.realRoot, real).split(path.sep);
      const published = FILE_KINDS.includes(realKind as FileKind) && name !== undefined && !name.startsWith('.') && deeper.length === 0;
      return published && statSync(real).isFile();
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT';
    }
  }

  newName(): string {
    return randomBytes(16).toString('base64url');
  }

  async pending(kind: FileKind, name: string, extension: string): Promise<PendingFile> {
    const key = `${kind}/${name}.${extension}`;
    const finalPath = path.join(this.root, key);
    // Same file system as the final place, so the rename is atomic; the real extension stays last for ffmpeg.
    const tempPath = path.join(this.root, TEMP_DIR, `${kind}-${name}.${randomBytes(4).toString('hex')}.${extension}`);
    await mkdir(path.dirname(tempPath), { recursive: true });
    let settled = false;
    return {
      path: tempPath,
      write: (content) => writeFile(tempPath, content),
      commit: async () => {
        settled = true;
        const { size } = await stat(tempPath);
        await rename(tempPath, finalPath);
        return { key, url: this.urlOf(key), bytes: size };
      },
      discard: async () => {
        if (settled) return;
        settled = true;
        await rm(tempPath, { force: true });
      },
    };
  }

  urlOf(key: string): string {
    return `${this.baseUrl}/${key}`;
  }

  async delete(key: string): Promise<void> {
    await rm(path.join(this.root, key), { force: true });
  }

  async sweep(maxAgeMs: number): Promise<number> {
    const published = await Promise.all(FILE_KINDS.map((kind) => removeOlderThan(path.join(this.root, kind), maxAgeMs)));
    const abandoned = await removeOlderThan(path.join(this.root, TEMP_DIR), Math.max(maxAgeMs, STALE_TEMP_MS));
    return published.reduce((sum, count) => sum + count, abandoned);
  }

  writable(): Promise<boolean> {
    return access(path.join(this.root, TEMP_DIR), constants.W_OK).then(
      () => true,
      () => false,
    );
  }
}

/** Removes the regular files in `folder` last written more than maxAgeMs ago; returns how many. */
async function removeOlderThan(folder: string, maxAgeMs: number): Promise<number> {
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
