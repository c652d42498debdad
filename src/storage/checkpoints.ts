/** A job's private work in storage (what it has already spoken), kept under a key of the job's (its request and client, hashed) so that another process or node can continue it; never served, removed when the job ends or by the sweep. */
export interface CheckpointStore {
  /** The names saved under `job` (one listing: a directory read, or paginated ListObjectsV2). */
  list(job: string, signal?: AbortSignal): Promise<Set<string>>;
  /** Saves `content` whole or not at all (a reader never sees part of one); replaces one of the same name. */
  save(job: string, name: string, content: Buffer, signal?: AbortSignal): Promise<void>;
  /** The content, or undefined when there is none. */
  load(job: string, name: string, signal?: AbortSignal): Promise<Buffer | undefined>;
  /** Removes the job's checkpoints (none: nothing happens). */
  clear(job: string): Promise<void>;
}

/** Checkpoints untouched for this long belong to a job no process will continue (its deadline is long past): the sweep removes them. */
export const STALE_CHECKPOINT_MS = 2 * 24 * 3_600_000;

/** A job or checkpoint name becomes part of a path or an object key: nothing that could leave its folder (no slash, no `..`). */
export function assertCheckpointName(part: string): void {
  if (!/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/.test(part)) throw new Error(`Not a checkpoint name: ${JSON.stringify(part)}`);
}
