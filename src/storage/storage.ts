import type { Config } from '../config.js';
import type { CheckpointStore } from './checkpoints.js';
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';

export type FileKind = 'audio' | 'video' | 'captions';
export const FILE_KINDS: readonly FileKind[] = ['audio', 'video', 'captions'];

export interface StoredFile {
  /** `<kind>/<name>.<ext>`, relative to the storage root (a bucket's key prefix left out). */
  key: string;
  /** Where clients fetch it: public, or presigned for a while (a private bucket). */
  url: string;
  bytes: number;
}

/** A file being produced: write it at `path`, then commit (it appears whole at its URL) or discard. */
export interface PendingFile {
  readonly path: string;
  /** Writes `content` as the whole file. */
  write(content: string): Promise<void>;
  /** Publishes the file; `signal` ends a wait for storage that is out of reach (the job's deadline). */
  commit(signal?: AbortSignal): Promise<StoredFile>;
  discard(): Promise<void>;
}

/**
 * Where published files live. Files appear only through `pending(...).commit()`, whole; `publishFiles` below is
 * the one transaction that publishes a file with its companions. A backend implements these few operations.
 */
export interface Storage {
  /** A fresh name no one can guess (128 random bits); files of one job may share it. */
  newName(): string;
  pending(kind: FileKind, name: string, extension: string): Promise<PendingFile>;
  /** Where a published file is fetched; asynchronous because a private bucket's URLs are signed. */
  urlOf(key: string): Promise<string>;
  /** Whether a published file is still there (a cache checks what it remembers, as retention may have removed it). */
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Removes published files older than maxAgeMs, and checkpoints older than STALE_CHECKPOINT_MS too; returns how many were removed. */
  sweep(maxAgeMs: number): Promise<number>;
  /** Jobs' private work in progress, under their names: never published, never served. */
  readonly checkpoints: CheckpointStore;
  /** Whether new files can be written now (readiness). */
  writable(): Promise<boolean>;
  /** The local folder files are written to, where there is one (its free space is watched). */
  readonly localDir?: string;
  /** True while storage is known to be out of reach (its last operation found it so): new work waits or is refused 503. */
  readonly unavailable?: boolean;
}

/** Options of `publishFiles`. */
export interface PublishOptions {
  /** Publish under this name rather than a fresh one (a queued job's id). */
  name?: string;
  /** Runs once every file is written, before any is published: a throw publishes nothing (a worker that lost its job). */
  beforeCommit?: () => Promise<void>;
  /** The job's: ends a wait for storage out of reach. */
  signal?: AbortSignal;
  /** Runs before the main file is written at `path` (its free disk checked); a throw writes nothing. */
  beforeWrite?: (path: string) => Promise<void>;
}

/** 128 random bits, URL-safe: a name no one can guess, for any backend. */
export function randomName(): string {
  return randomBytes(16).toString('base64url');
}

/** Storage could not take a file: the API's STORAGE_FAILED, whatever the backend's error (its own AppErrors, STORAGE_UNAVAILABLE among them, pass through). */
export function storageFailed(cause: unknown): never {
  if (cause instanceof AppError) throw cause;
  throw new AppError('STORAGE_FAILED', { cause });
}

/** Retry-After while storage is out of reach. */
const STORAGE_RETRY_SECONDS = 10;

/** Storage does not answer (a network failure, 5xx): STORAGE_UNAVAILABLE, 503 with Retry-After. */
export function storageUnavailable(cause?: unknown): AppError {
  return new AppError('STORAGE_UNAVAILABLE', { retryAfter: STORAGE_RETRY_SECONDS, cause });
}

/** Whether storage is out of reach now: an operation found it so, and its readiness check still finds it so. */
export async function storageDown(storage: Pick<Storage, 'unavailable' | 'writable'>): Promise<boolean> {
  return storage.unavailable === true && !(await storage.writable());
}

export interface FileSpec {
  kind: FileKind;
  extension: string;
}

/** A small text file published beside the main one under the same name, made from what producing the main file found. */
export interface Companion<T> extends FileSpec {
  content: (produced: T) => string;
}

export interface Publication<T> {
  file: StoredFile;
  /** In the order the companions were given. */
  companions: StoredFile[];
  produced: T;
}

/**
 * The one publish transaction, for every kind of output and every backend: `produce` writes the main file at the
 * path it is given (its failures pass through as they are); then the companions are written, committed first, and
 * the main file last, so that it never stands at its URL without them. On any failure nothing is left: pending
 * files are discarded and companions already published are deleted.
 *
 * `name`, by default a fresh one, lets a queued job publish under its own id, so that a run again after a crash
 * replaces what the first run may have published instead of leaving a second copy.
 */
export async function publishFiles<T>(
  storage: Storage,
  main: FileSpec,
  produce: (path: string) => Promise<T>,
  companions: ReadonlyArray<Companion<T>> = [],
  options: PublishOptions = {},
): Promise<Publication<T>> {
  const { name = storage.newName(), beforeCommit, signal, beforeWrite } = options;
  assertFileName(name);
  const pending = await storage.pending(main.kind, name, main.extension).catch(storageFailed);
  const extras: PendingFile[] = [];
  try {
    await beforeWrite?.(pending.path);
    const produced = await produce(pending.path);
    for (const companion of companions) {
      const extra = await storage.pending(companion.kind, name, companion.extension).catch(storageFailed);
      extras.push(extra);
      await extra.write(companion.content(produced)).catch(storageFailed);
    }
    await beforeCommit?.();
    const published: StoredFile[] = [];
    try {
      for (const extra of extras) published.push(await extra.commit(signal));
      return { file: await pending.commit(signal), companions: published, produced };
    } catch (cause) {
      await Promise.all(published.map((file) => storage.delete(file.key).catch(() => undefined)));
      storageFailed(cause);
    }
  } catch (error) {
    await Promise.all([pending, ...extras].map((file) => file.discard()));
    throw error;
  }
}

/** A name becomes part of a path and a URL: nothing that could leave its folder or need escaping. */
function assertFileName(name: string): void {
  if (!/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/.test(name)) throw new Error(`Not a file name for storage: ${JSON.stringify(name)}`);
}

/** What a backend is handed as it opens. */
export interface OpenOptions {
  /** Where a backend that uploads writes its files first, made when it asks (the local folder keeps its own, beside its files). */
  tempDir: () => Promise<string>;
  /** Whether this process alone writes the folders it opens, so that it may remove at start what an earlier one left half-written. */
  ownsFolders: boolean;
}

/** A storage backend: it opens itself from the configuration. */
export interface StorageBackend {
  openStorage(config: Config, options: OpenOptions): Promise<Storage>;
}
