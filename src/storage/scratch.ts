import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Folders this process opened (several apps may run in one process, as in the tests). */
const openHere = new Set<string>();

/** A folder of scratch space for one piece of work; `remove` deletes it and everything in it. */
export interface ScratchFolder {
  readonly path: string;
  remove(): Promise<void>;
}

/** A job's share of scratch space (request-budget.ts): taken before a file is written, a throw refusing it. */
export interface ScratchBudget {
  /** Takes `bytes` for `what`, about to be written in `folder` (its free disk checked too). */
  reserveScratch(folder: string, bytes: number, what: string): Promise<void>;
  /** Whether `bytes` more would fit (work that can do without them chooses so). */
  scratchFits(bytes: number): boolean;
  /** STORAGE_FULL unless `folder`'s disk keeps its minimum free after `bytes` more. */
  room(folder: string, bytes: number): Promise<void>;
}

/** Where work gets its scratch folders. */
export interface Scratch {
  folder(prefix: string): Promise<ScratchFolder>;
}

/** Folders in the OS temp dir, for callers outside the service (tests, benchmarks) that have no ScratchSpace. */
export const osTempScratch: Scratch = {
  async folder(prefix) {
    const folder = await mkdtemp(path.join(os.tmpdir(), `voxreel-${prefix}-`));
    return { path: folder, remove: () => rm(folder, { recursive: true, force: true }) };
  },
};

/**
 * All of the service's scratch space (video parts, audio that cannot be streamed, engines' temporary files) lives
 * under one root, in a folder of this process's own named `<pid>-<token>`. At start-up the folders of processes
 * that no longer run are removed, so a killed server leaves nothing behind for long, while other instances
 * sharing the root keep theirs.
 */
export class ScratchSpace implements Scratch {
  private constructor(readonly dir: string) {}

  static async open(root: string): Promise<ScratchSpace> {
    await mkdir(root, { recursive: true });
    await removeAbandoned(root);
    const dir = path.join(root, `${process.pid}-${randomBytes(4).toString('hex')}`);
    await mkdir(dir, { recursive: true });
    openHere.add(path.basename(dir));
    return new ScratchSpace(dir);
  }

  async folder(prefix: string): Promise<ScratchFolder> {
    const folder = await mkdtemp(path.join(this.dir, `${prefix}-`));
    return { path: folder, remove: () => rm(folder, { recursive: true, force: true }) };
  }

  /** A folder for a kind of helper process to use as its TMPDIR. */
  async shared(name: string): Promise<string> {
    const folder = path.join(this.dir, name);
    await mkdir(folder, { recursive: true });
    return folder;
  }

  async close(): Promise<void> {
    openHere.delete(path.basename(this.dir));
    await rm(this.dir, { recursive: true, force: true });
  }
}

async function removeAbandoned(root: string): Promise<void> {
  for (const name of await readdir(root).catch(() => [] as string[])) {
    const pid = Number(/^(\d+)-[0-9a-f]+$/.exec(name)?.[1]);
    // Our own pid on a folder we did not open was an earlier process's (a container restarted with the same pid).
    const live = pid === process.pid ? openHere.has(name) : isRunning(pid);
    if (!Number.isInteger(pid) || live) continue;
    await rm(path.join(root, name), { recursive: true, force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
