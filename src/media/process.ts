import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { AppError, processFailure } from '../errors.js';

const STDERR_TAIL_BYTES = 4096;
const DEFAULT_KILL_GRACE_MS = 2000;

export interface ProcessLimits {
  /** Aborting kills the process (SIGTERM, then SIGKILL after killGraceMs). */
  signal?: AbortSignal;
  /** Kills the process after this many milliseconds; 0 or undefined means no limit. */
  timeoutMs?: number;
  killGraceMs?: number;
}

/** Just the process limits of a larger options object, to hand on to another run. */
export function limitsOf(options: ProcessLimits): ProcessLimits {
  return { signal: options.signal, timeoutMs: options.timeoutMs, killGraceMs: options.killGraceMs };
}

export interface ProcessFailure {
  command: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  isCanceled: boolean;
  /** With isCanceled: the abort signal's reason (why the job was stopped). */
  cancelReason?: unknown;
  stderrTail: string;
  cause?: unknown;
}

/** A child process that failed, timed out or was canceled; flags instead of messages to parse. */
export class ProcessError extends Error implements ProcessFailure {
  readonly command: string;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
  readonly isCanceled: boolean;
  readonly cancelReason: unknown;
  readonly stderrTail: string;

  constructor(failure: ProcessFailure) {
    const reason = failure.timedOut
      ? 'timed out'
      : failure.isCanceled
        ? 'was canceled'
        : failure.signal
          ? `was killed by ${failure.signal}`
          : `exited with code ${String(failure.exitCode)}`;
    super(`${failure.command} ${reason}${failure.stderrTail ? `: ${failure.stderrTail.slice(-500)}` : ''}`, {
      cause: failure.cause,
    });
    this.name = 'ProcessError';
    this.command = failure.command;
    this.exitCode = failure.exitCode;
    this.signal = failure.signal;
    this.timedOut = failure.timedOut;
    this.isCanceled = failure.isCanceled;
    this.cancelReason = failure.cancelReason;
    this.stderrTail = failure.stderrTail;
  }
}

/** Keeps the last bytes of a stream, for error reports. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly limit = STDERR_TAIL_BYTES) {}

  push(chunk: Buffer | string): void {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.chunks.push(buffer);
    this.size += buffer.length;
    while (this.size - (this.chunks[0]?.length ?? 0) >= this.limit && this.chunks.length > 1) {
      this.size -= this.chunks.shift()?.length ?? 0;
    }
  }

  toString(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.limit)).toString('utf8').trim();
  }
}

/** util-linux's setpriv (in every Debian and Ubuntu) sets PR_SET_PDEATHSIG, then runs the program. */
const SETPRIV = '/usr/bin/setpriv';
const canTieToParent = process.platform === 'linux' && existsSync(SETPRIV);

/**
 * The command line that runs `command` so that the kernel kills it (SIGKILL) the moment this process dies, even
 * by SIGKILL, when nothing of ours is left to clean up. Elsewhere than Linux it is the command as it is.
 */
export function tiedToParent(command: string, args: readonly string[]): { command: string; args: string[] } {
  // A missing program is left to fail as itself (ENOENT), not as setpriv's exit code.
  const missing = path.isAbsolute(command) && !existsSync(command);
  return canTieToParent && !missing ? { command: SETPRIV, args: ['--pdeathsig', 'KILL', '--', command, ...args] } : { command, args: [...args] };
}

/**
 * For libraries that start a binary by its path alone (fluent-ffmpeg): a launcher script in `dir` that runs
 * `binary` tied to its parent, as tiedToParent does; the binary itself where that cannot be done.
 */
export async function tiedLauncher(binary: string, dir: string): Promise<string> {
  if (!canTieToParent) return binary;
  const launcher = path.join(dir, `${path.basename(binary)}-tied`);
  const quoted = `'${binary.replace(/'/g, `'\\''`)}'`;
  await writeFile(launcher, `#!/bin/sh\nexec ${SETPRIV} --pdeathsig KILL -- ${quoted} "$@"\n`);
  await chmod(launcher, 0o755);
  return launcher;
}

const liveChildren = new Set<ChildProcess>();

/** Last resort when the process must exit with work in flight: no child may outlive us. */
export function killAllChildren(): void {
  for (const child of liveChildren) child.kill('SIGKILL');
}

function track(child: ChildProcess): void {
  if (liveChildren.has(child) || child.exitCode !== null || child.signalCode !== null) return;
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
}

export interface Supervision {
  readonly timedOut: boolean;
  readonly isCanceled: boolean;
  /** The abort signal's reason, once it aborted. */
  readonly cancelReason: unknown;
  /** Stops the process now: SIGTERM, then SIGKILL after the grace period (until it exits). */
  terminate(): void;
  /** Stops the timers and listeners; call once the process has exited. */
  release(): void;
}

/**
 * Enforces the abort signal and the timeout on a running child: SIGTERM first, SIGKILL after the grace period.
 * Shared by every wrapper that starts processes (spawn here, fluent-ffmpeg in ffmpeg.ts).
 */
export function supervise(child: ChildProcess, limits: ProcessLimits): Supervision {
  let timedOut = false;
  let isCanceled = false;
  let cancelReason: unknown;
  track(child);
  let escalation: NodeJS.Timeout | undefined;
  const stop = () => {
    if (child.exitCode !== null || child.signalCode !== null || escalation) return;
    // A program reading stdin may wait on it before it notices the signal.
    child.stdin?.destroy();
    child.kill('SIGTERM');
    escalation = setTimeout(() => child.kill('SIGKILL'), limits.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    escalation.unref();
  };
  const onAbort = () => {
    isCanceled = true;
    cancelReason = limits.signal?.reason;
    stop();
  };
  const timer =
    limits.timeoutMs && limits.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          stop();
        }, limits.timeoutMs)
      : undefined;
  if (limits.signal?.aborted) onAbort();
  else limits.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    get timedOut() {
      return timedOut;
    },
    get isCanceled() {
      return isCanceled;
    },
    get cancelReason() {
      return cancelReason;
    },
    terminate: stop,
    release() {
      if (timer) clearTimeout(timer);
      if (escalation) clearTimeout(escalation);
      limits.signal?.removeEventListener('abort', onAbort);
    },
  };
}

export interface RunOptions extends ProcessLimits {
  /**
   * Written to stdin, which is then closed. A promise: the program starts at once (its start-up overlapping whatever
   * makes the input) and gets the input once it settles; should it reject, the program is killed, never left to
   * finish on an early end of input.
   */
  input?: string | Buffer | Promise<Buffer>;
  /** Handed stdout as it comes, instead of collecting it (the result's stdout is then empty). */
  onStdout?: (chunk: Buffer) => void;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export interface RunResult {
  stdout: Buffer;
  stderr: string;
}

/** A program and its arguments. */
export interface Command {
  command: string;
  args: readonly string[];
}

/** A started program: its stdout (read here unless `piped`) and its result. */
interface Started {
  child: ChildProcess & { stdout: Readable };
  done: Promise<RunResult>;
}

/**
 * Starts a program with an argument array (never a shell), tied to this process and supervised by the limits.
 * `stdin`: another program's stdout, handed over as it is (the data never passes through this process); `piped`:
 * its stdout is left for such a program to read, not collected.
 */
function start({ command, args }: Command, options: RunOptions & { stdin?: Readable; piped?: boolean }): Started {
  const tied = tiedToParent(command, args);
  const child = spawn(tied.command, tied.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: [options.stdin ?? 'pipe', 'pipe', 'pipe'],
  }) as ChildProcess & { stdout: Readable; stderr: Readable };
  const supervision = supervise(child, options);
  const stdout: Buffer[] = [];
  const stderr = new TailBuffer();
  let spawnError: unknown;
  if (!options.piped) child.stdout.on('data', options.onStdout ?? ((chunk: Buffer) => stdout.push(chunk)));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  child.on('error', (error) => {
    spawnError = error;
  });
  const done = new Promise<RunResult>((resolve, reject) => {
    child.on('close', (exitCode, signal) => {
      supervision.release();
      if (exitCode === 0 && !supervision.timedOut && !supervision.isCanceled && !spawnError) {
        resolve({ stdout: Buffer.concat(stdout), stderr: stderr.toString() });
        return;
      }
      reject(
        new ProcessError({
          command,
          exitCode,
          signal,
          timedOut: supervision.timedOut,
          isCanceled: supervision.isCanceled,
          cancelReason: supervision.cancelReason,
          stderrTail: stderr.toString(),
          cause: spawnError,
        }),
      );
    });
  });
  if (child.stdin) {
    const stdin = child.stdin;
    stdin.on('error', () => {
      // EPIPE when the program exits without reading its input; its exit status tells the story.
    });
    const { input } = options;
    if (input instanceof Promise) {
      input.then(
        (data) => stdin.end(data),
        () => child.kill('SIGKILL'),
      );
    } else stdin.end(input);
  }
  return { child, done };
}

/** Runs a program with an argument array (never a shell) and collects its output. */
export function runProcess(command: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return start({ command, args }, options).done;
}

/**
 * Runs programs one into the next, each one's stdout piped straight into the next one's stdin (a core for each
 * stage of one job), all under the same limits; `options.input` goes to the first, the last one's stdout is
 * collected (or handed to `options.onStdout`). Fails with the first failure of any: a program that fails leaves the next an early end of input, which
 * must not pass for a whole one.
 */
export async function runPipeline(commands: readonly Command[], options: RunOptions = {}): Promise<RunResult[]> {
  const started: Started[] = [];
  commands.forEach((command, index) => {
    const upstream = started[index - 1];
    const last = index === commands.length - 1;
    const own = { ...options, piped: !last, onStdout: last ? options.onStdout : undefined };
    started.push(start(command, upstream ? { ...own, input: undefined, stdin: upstream.child.stdout } : own));
    // In the same tick, before this process has read a byte of it: the next program alone holds the pipe's read end,
    // so a program meets a broken pipe, rather than a full one, should the next stop early.
    upstream?.child.stdout.destroy();
  });
  return Promise.all(started.map((program) => program.done));
}

/** Maps a ProcessError to the API's error for its cause: canceled, timed out, or failed. */
export function rethrowAsAppError(failedCode: 'MEDIA_FAILED' | 'ENGINE_FAILED') {
  return (error: unknown): never => {
    if (error instanceof AppError) throw error;
    if (error instanceof ProcessError) {
      if (error.isCanceled || error.timedOut) throw processFailure(error, failedCode, error);
      if (/No space left|Permission denied|Read-only file system/i.test(error.stderrTail)) {
        throw new AppError('STORAGE_FAILED', { cause: error });
      }
    }
    throw new AppError(failedCode, { cause: error });
  };
}
