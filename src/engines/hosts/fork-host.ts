import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { supervise, tiedToParent } from '../../media/process.js';
import { awaitReady, type ExitStatus } from './child-exit.js';
import { isHostReady } from './host-protocol.js';

export interface ForkHostOptions {
  /** Absolute path of the entry module, which calls serveJobs(). */
  module: string;
  execArgv?: readonly string[];
  args?: readonly string[];
  /** The parent of the child's own TMPDIR; default the parent's TMPDIR. */
  tempDir?: string;
  /** Variables set in the child's environment besides the parent's (e.g. the C allocator's tuning). */
  env?: Readonly<Record<string, string>>;
}

/**
 * TypeScript hosts (development, tests) run through tsx; the compiled build's run as they are, without a loader's
 * start-up and memory. `--import tsx` would be resolved from the working directory; an absolute URL works from anywhere.
 */
function loaderFor(module: string): string[] {
  return extname(module) === '.ts' ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : [];
}

/**
 * Forks a Node engine host as every one is: tied to this process (setpriv, so it dies with us even while starting),
 * IPC with structured clones, its output piped, and a TMPDIR of its own (`tempDir`, for the caller to remove once
 * the host has exited: what a killed job leaves there goes with it).
 */
export async function forkHost(options: ForkHostOptions): Promise<{ child: ChildProcess; tempDir: string | undefined }> {
  const tempDir = options.tempDir ? await mkdtemp(join(options.tempDir, 'host-')) : undefined;
  const tied = tiedToParent(process.execPath, [...loaderFor(options.module), ...(options.execArgv ?? [])]);
  const child = fork(options.module, [...(options.args ?? [])], {
    execPath: tied.command,
    execArgv: tied.args,
    serialization: 'advanced',
    env: { ...process.env, ...options.env, ...(tempDir ? { TMPDIR: tempDir } : {}) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  return { child, tempDir };
}

/** Whether the host's process has not exited yet. */
export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Stops a host's process (SIGTERM, then SIGKILL) and resolves once it has exited. */
export async function stopHost(child: ChildProcess, exited: Promise<ExitStatus>): Promise<void> {
  if (!isRunning(child)) {
    await exited;
    return;
  }
  const supervision = supervise(child, { signal: AbortSignal.abort() });
  await exited;
  supervision.release();
}

/** Removes a host's TMPDIR once it has exited. */
export function removeWhenExited(exited: Promise<ExitStatus>, tempDir: string | undefined): void {
  if (tempDir) void exited.then(() => rm(tempDir, { recursive: true, force: true }));
}

/** `value` once the host has said it is ready (host-runtime.ts); killed and failed by `failure` when it does not in time. */
export function whenHostReady<T>(options: {
  child: ChildProcess;
  exited: Promise<ExitStatus>;
  timeoutMs: number;
  failure: (reason: string, status: ExitStatus) => Error;
  value: T;
}): Promise<T> {
  return awaitReady({
    ...options,
    listen: (onReady) => {
      const onMessage = (message: unknown) => {
        if (isHostReady(message)) onReady();
      };
      options.child.on('message', onMessage);
      return () => options.child.off('message', onMessage);
    },
  });
}

/** How long a host may take to start unless told otherwise (ENGINE_START_TIMEOUT_MS sets it for the service). */
const DEFAULT_START_TIMEOUT_MS = 60_000;
/** A host that fails to start (a loaded machine can make a start miss its deadline) is tried once more, after this. */
const START_RETRY_MS = 500;

/** What a started host shows the start: when it exits, and the error a failed start is. */
export interface StartingHost {
  readonly exited: Promise<ExitStatus>;
  failure(reason: string, status: ExitStatus): Error;
}

/** Forks a host, wraps it with `make`, and resolves with it once it is ready (its TMPDIR removed once it exits). */
export async function startHost<H extends StartingHost>(options: ForkHostOptions & { startTimeoutMs?: number }, make: (child: ChildProcess) => H): Promise<H> {
  const { child, tempDir } = await forkHost(options);
  const host = make(child);
  removeWhenExited(host.exited, tempDir);
  return whenHostReady({
    child,
    exited: host.exited,
    timeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
    failure: (reason, status) => host.failure(reason, status),
    value: host,
  });
}

/** `start`, and once more after a pause when it fails, unless `stopped` by then. */
export function startTwice<T>(start: () => Promise<T>, stopped: () => Error | undefined): Promise<T> {
  const attempt = () => new Promise<T>((resolve) => resolve(start()));
  return attempt().catch(async () => {
    await new Promise((resolve) => setTimeout(resolve, START_RETRY_MS));
    const reason = stopped();
    if (reason) throw reason;
    return attempt();
  });
}
