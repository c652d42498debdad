import type { ChildProcess } from 'node:child_process';
import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError } from '../../errors.js';
import { ProcessError, supervise, TailBuffer, type ProcessLimits, type Supervision } from '../../media/process.js';
import { ExitListeners, whenExited, type ExitStatus } from './child-exit.js';
import { isRunning, startHost, stopHost } from './fork-host.js';
import { isHostReply, type HostRequest } from './host-protocol.js';
import { jobFailure, type EngineHost } from './host-pool.js';

/** Hosts beyond an engine's warm ones stop after this long without a job, giving their memory back. */
export const HOST_IDLE_MS = 60_000;
const RETIRE_GRACE_MS = 2000;

/** Path of a host entry module next to the calling module, with the caller's own extension (.ts, or .js once built). */
export function hostModulePath(name: string, callerUrl: string): string {
  return fileURLToPath(new URL(`./${name}${extname(fileURLToPath(callerUrl))}`, callerUrl));
}

export interface NodeHostOptions<Result> {
  /** Absolute path of the entry module, which calls serveJobs(). */
  module: string;
  /** Checks a result before it is trusted: a child that answers garbage is killed. */
  isResult: (value: unknown) => value is Result;
  execArgv?: readonly string[];
  /** Jobs before the child is replaced by a fresh one. */
  maxJobs?: number;
  startTimeoutMs?: number;
  /** The child's TMPDIR; default the parent's. */
  tempDir?: string;
}

/** A Node child process running an engine host (see host-runtime.ts), one job at a time over IPC. */
export class NodeHost<Job, Result> implements EngineHost<Job, Result> {
  private readonly output = new TailBuffer();
  readonly exited: Promise<ExitStatus>;
  private readonly exitListeners: ExitListeners;
  private busy = false;
  /** No more jobs: used up, or being killed. */
  private retired = false;
  private jobs = 0;
  private nextId = 1;

  private constructor(
    private readonly child: ChildProcess,
    private readonly options: NodeHostOptions<Result>,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => this.output.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.output.push(chunk));
    child.on('error', (error) => this.output.push(`${error.message}\n`));
    this.exited = whenExited(child);
    this.exitListeners = new ExitListeners(this.exited);
  }

  static async start<Job, Result>(options: NodeHostOptions<Result>): Promise<NodeHost<Job, Result>> {
    return startHost(options, (child) => new NodeHost<Job, Result>(child, options));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get available(): boolean {
    return !this.busy && !this.retired && this.alive;
  }

  run(job: Job, limits: ProcessLimits): Promise<Result> {
    if (!this.available) {
      return Promise.reject(new AppError('ENGINE_FAILED', { message: 'The engine process is not available.' }));
    }
    this.busy = true;
    const id = this.nextId++;
    const supervision = supervise(this.child, limits);
    return new Promise<Result>((resolve, reject) => {
      let settled = false;
      let protocolError: string | undefined;
      const settle = () => {
        settled = true;
        removeExitListener();
        this.child.off('message', onMessage);
        supervision.release();
        // An answer can cross the timeout or the abort: the process is being killed all the same.
        if (supervision.timedOut || supervision.isCanceled) this.retired = true;
        this.busy = false;
        this.jobs += 1;
        if (this.jobs >= (this.options.maxJobs ?? Infinity)) this.retire();
      };
      const fail = (reason: string) => {
        // Whatever state the engine is in, it is not trusted again (not even a good answer that follows):
        // kill it and report once it is gone.
        protocolError ??= reason;
        this.retired = true;
        this.child.kill('SIGKILL');
      };
      const onMessage = (message: unknown) => {
        if (settled || protocolError) return;
        if (!isHostReply(message) || message.id !== id) return fail('sent an unexpected message');
        if (!message.ok) return fail(`failed: ${message.error}`);
        if (!this.options.isResult(message.result)) return fail('sent a malformed result');
        settle();
        resolve(message.result);
      };
      this.child.on('message', onMessage);
      const removeExitListener = this.exitListeners.add((status) => {
        if (settled) return;
        settle();
        reject(this.jobError(protocolError, status, supervision));
      });
      const request: HostRequest<Job> = { id, job };
      this.child.send(request, (error) => {
        if (error) fail(`could not be sent the job: ${error.message}`);
      });
    });
  }

  close(): Promise<void> {
    return stopHost(this.child, this.exited);
  }

  private get alive(): boolean {
    return isRunning(this.child);
  }

  /** Disconnecting makes the host exit by itself; the kill is only a fallback. */
  private retire(): void {
    this.retired = true;
    if (this.child.connected) this.child.disconnect();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), RETIRE_GRACE_MS);
    timer.unref();
    void this.exited.then(() => clearTimeout(timer));
  }

  private jobError(protocolError: string | undefined, status: ExitStatus, supervision: Supervision): AppError {
    const cause = this.failure(protocolError ?? 'exited during a job', {
      ...status,
      timedOut: supervision.timedOut,
      isCanceled: supervision.isCanceled,
      cancelReason: supervision.cancelReason,
    });
    return protocolError ? new AppError('ENGINE_FAILED', { cause }) : jobFailure(supervision, cause);
  }

  failure(reason: string, status: Partial<ExitStatus> & { timedOut?: boolean; isCanceled?: boolean; cancelReason?: unknown }): ProcessError {
    return new ProcessError({
      command: `${basename(this.options.module)} (${reason})`,
      exitCode: status.exitCode ?? null,
      signal: status.signal ?? null,
      timedOut: status.timedOut ?? false,
      isCanceled: status.isCanceled ?? false,
      cancelReason: status.cancelReason,
      stderrTail: this.output.toString(),
    });
  }
}
