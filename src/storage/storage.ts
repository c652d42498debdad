import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { mkdir, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';

export type FileKind = 'audio' | 'video' | 'captions';
export const FILE_KINDS: readonly FileKind[] = ['audio', 'video', 'captions'];

export interface StoredFile {
  /** `<kind>/<name>.<ext>`, relative to the storage root. */
  key: string;
  url: string;
  bytes: number;
}

/** A file being produced: write it at `path`, then commit (it appears whole at its URL) or discard. */
export interface PendingFile {
  readonly path: string;
  commit(): Promise<StoredFile>;
  discard(): Promise<void>;
}

export interface Storage {
  /** A fresh name no one can guess (128 random bits); files of one job may share it. */
  newName(): string;
  pending(kind: FileKind, name: string, extension: string): Promise<PendingFile>;
  urlOf(key: string): string;
  delete(key: string): Promise<void>;
  /** Removes published files older than maxAgeMs and abandoned temporary files; returns how many were removed. */
  sweep(maxAgeMs: number): Promise<number>;
}

const TEMP_DIR = '.tmp';

/** Files in a local directory that this service, or any web server or CDN, serves as `baseUrl`. */
export class LocalStorage implements Storage {
  constructor(
    readonly root: string,
    readonly baseUrl: string,
  ) {
    this.realRoot = path.resolve(root);
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
   * hidden, and, symlinks resolved, still inside the root. Missing files pass, to be answered 404.
   */
  isServable(requestPath: string): boolean {
    const relative = requestPath.replace(/^\/+/, '');
    const [kind, ...rest] = relative.split('/');
    if (!FILE_KINDS.includes(kind as FileKind) || rest.length !== 1 || /[\0\\]|^\./.test(rest[0] ?? '.')) return false;
    let real: string;
    try {
      real = realpathSync(path.join(this.root, relative));
    } catch {
      return true;
    }
    const inside = path.relative(this.realRoot, real);
    return inside !== '' && !inside.startsWith('..') && !path.isAbsolute(inside);
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
    const cutoff = Date.now() - maxAgeMs;
    let removed = 0;
    for (const dir of [TEMP_DIR, ...FILE_KINDS]) {
      const folder = path.join(this.root, dir);
      const names = await readdir(folder).catch(() => [] as string[]);
      for (const name of names) {
        const file = path.join(folder, name);
        const info = await stat(file).catch(() => undefined);
        if (info?.isFile() && info.mtimeMs < cutoff) {
          await rm(file, { force: true });
          removed += 1;
        }
      }
    }
    return removed;
  }
}
