import { realpathSync, statSync } from 'node:fs';
import { access, constants, mkdir, readdir, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { writeAtomically } from './atomic-write.js';
import { assertCheckpointName, STALE_CHECKPOINT_MS, type CheckpointStore } from './checkpoints.js';
import { FILE_KINDS, randomName, type FileKind, type OpenOptions, type PendingFile, type Storage } from './storage.js';
import { pendingFile, removeOlderThan, STALE_TEMP_MS, tempFileName } from './temp-files.js';

const TEMP_DIR = '.tmp';
/** Jobs' checkpoints, `<job>/<name>`: hidden (its dot keeps it from being served) and kept across restarts. */
const CHECKPOINTS_DIR = '.checkpoints';

/** Files in a local directory that this service, or any web server or CDN, serves as `baseUrl`. */
export class LocalStorage implements Storage {
  constructor(
    readonly root: string,
    readonly baseUrl: string,
  ) {
    this.realRoot = path.resolve(root);
    this.checkpoints = new LocalCheckpoints(path.join(root, CHECKPOINTS_DIR), path.join(root, TEMP_DIR));
  }

  readonly checkpoints: LocalCheckpoints;

  get localDir(): string {
    return this.root;
  }

  private realRoot: string;

  /** Creates the folders and removes temporary files an earlier process left behind (one process per OUTPUT_DIR); checkpoints stay, for the jobs that continue. */
  async init(clearTemp = true): Promise<void> {
    if (clearTemp) await rm(path.join(this.root, TEMP_DIR), { recursive: true, force: true });
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
    return randomName();
  }

  async pending(kind: FileKind, name: string, extension: string): Promise<PendingFile> {
    const key = `${kind}/${name}.${extension}`;
    // Same file system as the final place, so the rename is atomic.
    const tempPath = path.join(this.root, TEMP_DIR, tempFileName(kind, name, extension));
    await mkdir(path.dirname(tempPath), { recursive: true });
    return pendingFile(tempPath, async () => {
      const { size } = await stat(tempPath);
      await rename(tempPath, path.join(this.root, key));
      return { key, url: await this.urlOf(key), bytes: size };
    });
  }

  async urlOf(key: string): Promise<string> {
    return `${this.baseUrl}/${key}`;
  }

  /** Only a published file counts: not a temporary one, nothing outside the published folders. */
  async exists(key: string): Promise<boolean> {
    if (!this.isServable(key)) return false;
    return stat(path.join(this.root, key)).then(
      (info) => info.isFile(),
      () => false,
    );
  }

  async delete(key: string): Promise<void> {
    await rm(path.join(this.root, key), { force: true });
  }

  async sweep(maxAgeMs: number): Promise<number> {
    const published = await Promise.all(FILE_KINDS.map((kind) => removeOlderThan(path.join(this.root, kind), maxAgeMs)));
    const abandoned = await removeOlderThan(path.join(this.root, TEMP_DIR), Math.max(maxAgeMs, STALE_TEMP_MS));
    const stale = await this.checkpoints.sweep(Math.max(maxAgeMs, STALE_CHECKPOINT_MS));
    return published.reduce((sum, count) => sum + count, abandoned + stale);
  }

  writable(): Promise<boolean> {
    return access(path.join(this.root, TEMP_DIR), constants.W_OK).then(
      () => true,
      () => false,
    );
  }
}

/**
 * LocalStorage's checkpoints: files `<folder>/<job>/<name>`, each written in `tempDir` (same file system) and renamed
 * into place. The disk answers at once, so no `signal` is needed to end a wait.
 */
class LocalCheckpoints implements CheckpointStore {
  constructor(
    private readonly folder: string,
    private readonly tempDir: string,
  ) {}

  async list(job: string): Promise<Set<string>> {
    const names = await readdir(this.jobFolder(job)).catch(absentAs([] as string[]));
    return new Set(names);
  }

  async save(job: string, name: string, content: Buffer): Promise<void> {
    const file = this.fileOf(job, name);
    await Promise.all([mkdir(path.dirname(file), { recursive: true }), mkdir(this.tempDir, { recursive: true })]);
    await writeAtomically(file, this.tempDir, async (output) => void output.end(content));
  }

  async load(job: string, name: string): Promise<Buffer | undefined> {
    return readFile(this.fileOf(job, name)).catch(absentAs(undefined));
  }

  async clear(job: string): Promise<void> {
    await rm(this.jobFolder(job), { recursive: true, force: true });
  }

  /** Removes the folders of jobs whose newest checkpoint (or, with none, the folder itself) is older than maxAgeMs; returns how many files went. */
  async sweep(maxAgeMs: number): Promise<number> {
    const cutoff = Date.now() - maxAgeMs;
    let removed = 0;
    for (const job of await readdir(this.folder).catch(absentAs([] as string[]))) {
      const jobFolder = path.join(this.folder, job);
      const folderInfo = await stat(jobFolder).catch(() => undefined);
      if (!folderInfo?.isDirectory()) continue;
      const files = await readdir(jobFolder).catch(() => [] as string[]);
      const infos = await Promise.all(files.map((name) => stat(path.join(jobFolder, name)).catch(() => undefined)));
      const times = infos.flatMap((info) => (info?.isFile() ? [info.mtimeMs] : []));
      const newest = times.length > 0 ? Math.max(...times) : folderInfo.mtimeMs;
      if (newest < cutoff) {
        await rm(jobFolder, { recursive: true, force: true });
        removed += times.length;
      }
    }
    return removed;
  }

  private jobFolder(job: string): string {
    assertCheckpointName(job);
    return path.join(this.folder, job);
  }

  private fileOf(job: string, name: string): string {
    assertCheckpointName(name);
    return path.join(this.jobFolder(job), name);
  }
}

/** A `catch` for a read of what may not be there: `fallback` when it is absent (ENOENT), any other failure passed on. */
function absentAs<T>(fallback: T): (error: unknown) => T {
  return (error) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return fallback;
    throw error;
  };
}

/** The local folder OUTPUT_DIR, served as CDN_URL: created, and cleared of what an earlier process left half-written when this one owns it. */
export async function openStorage(config: Config, options: Pick<OpenOptions, 'ownsFolders'>): Promise<LocalStorage> {
  const storage = new LocalStorage(config.outputDir, config.cdnUrl);
  await storage.init(options.ownsFolders);
  return storage;
}
