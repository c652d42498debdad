import type { ChildProcess } from 'node:child_process';
import { basename } from 'node:path';
import { AppError, abortError } from '../../errors.js';
import { ProcessError, TailBuffer, type ProcessLimits } from '../../media/process.js';
import { whenExited, type ExitStatus } from './child-exit.js';
import { isRunning, startHost, startTwice, stopHost } from './fork-host.js';
import { isHostReady, isHostReply, type HostRequest } from './host-protocol.js';

const RETIRE_GRACE_MS = 2000;
/** After a job is given up, a host that sends nothing at all for this long has a blocked event loop: it is killed. */
const SILENCE_LIMIT_MS = 3000;
/** A given-up job whose answer has not come back in this long is stuck inside the engine: the host is killed. */
const GIVEN_UP_LIMIT_MS = 30_000;

export interface SharedHostOptions<Job, Result> {
  /** Absolute path of the entry module, which calls serveJobs() (host-runtime.ts answers jobs as they come). */
  module: string;
  args?: readonly string[];
  /** Checks a result before it is trusted: a child that answers garbage is killed. */
  isResult: (value: unknown) => value is Result;
  execArgv?: readonly string[];
  startTimeoutMs?: number;
  /** The child's TMPDIR; default the parent's. */
  tempDir?: string;
  /** Variables set in the child's environment besides the parent's. */
  env?: Readonly<Record<string, string>>;
  /** Per job, from when it is sent; 0 or none: no limit. */
  jobTimeoutMs?: number;
  /** A job the child answers at once from its event loop, sent after a job is given up to see that it still answers. */
  ping: Job;
  /** The job that asks the child to stop a given-up job early, if it can; its answer is dropped. */
  cancel?: (job: Job) => Job | undefined;
  /** The job as sent to one process: `told` is that process's own set, to tell it something only once. */
  prepare?: (job: Job, told: Set<string>) => Job;
}

interface InFlight<Result> {
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

function shuttingDown(): AppError {
  return new AppError('SHUTTING_DOWN', { message: 'The speech engine is shutting down.' });
}

/** One started child: several jobs in flight, each by its id. */
class HostProcess<Job, Result> {
  readonly exited: Promise<ExitStatus>;
  /** What prepare() has told this process. */
  readonly told = new Set<string>();
  private readonly output = new TailBuffer();
  private readonly jobs = new Map<number, InFlight<Result>>();
  /** Ids whose answers are dropped (given-up jobs, with the timer that kills a host which never answers them; pings; cancels). */
  private readonly dropped = new Map<number, NodeJS.Timeout | undefined>();
  private nextId = 1;
  private silence: NodeJS.Timeout | undefined;
  /** Why we killed it. */
  private stopped: string | undefined;
  /** What its jobs fail with once it has exited. */
  private exitError: AppError | undefined;
  private closing = false;
  /** Takes no more jobs: killed, or no longer trusted and finishing the jobs it has. */
  private retired = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly options: SharedHostOptions<Job, Result>,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => this.output.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.output.push(chunk));
    child.on('error', (error) => this.output.push(`${error.message}\n`));
    child.on('message', (message: unknown) => this.receive(message));
    this.exited = whenExited(child);
    void this.exited.then((status) => this.onExit(status));
  }

  static async start<Job, Result>(options: SharedHostOptions<Job, Result>): Promise<HostProcess<Job, Result>> {
    return startHost(options, (child) => new HostProcess<Job, Result>(child, options));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return isRunning(this.child);
  }

  get usable(): boolean {
    return this.alive && !this.retired;
  }

  // A given-up job fails at once with its reason, its late answer dropped: the shared process dies only if it then goes silent or never ends that job.
  run(job: Job, { signal, timeoutMs }: ProcessLimits): Promise<Result> {
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    if (this.exitError) return Promise.reject(this.exitError);
    const id = this.nextId++;
    return new Promise<Result>((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.jobs.delete(id);
        this.retireWhenIdle();
      };
      const giveUp = (error: AppError) => {
        if (!this.jobs.has(id)) return;
        settle();
        reject(error);
        this.dropAnswer(id, GIVEN_UP_LIMIT_MS);
        const cancel = this.options.cancel?.(job);
        if (cancel !== undefined) this.notify(cancel);
        this.expectWord();
      };
      const onAbort = () => giveUp(abortError(signal?.reason));
      const timer = timeoutMs && timeoutMs > 0 ? setTimeout(() => giveUp(new AppError('JOB_TIMEOUT')), timeoutMs) : undefined;
      signal?.addEventListener('abort', onAbort, { once: true });
      this.jobs.set(id, {
        resolve: (result) => {
          settle();
          resolve(result);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      this.send(id, job);
    });
  }

  /** Stops the process (SIGTERM, then SIGKILL); its jobs fail with SHUTTING_DOWN. */
  async close(): Promise<void> {
    this.closing = true;
    this.retired = true;
    await stopHost(this.child, this.exited);
  }

  failure(reason: string, status: Partial<ExitStatus>): ProcessError {
    return new ProcessError({
      command: `${basename(this.options.module)} (${reason})`,
      exitCode: status.exitCode ?? null,
      signal: status.signal ?? null,
      timedOut: false,
      isCanceled: false,
      stderrTail: this.output.toString(),
    });
  }

  private send(id: number, job: Job): void {
    const sent = this.options.prepare ? this.options.prepare(job, this.told) : job;
    this.child.send({ id, job: sent } satisfies HostRequest<Job>, (error) => {
      if (!error) return;
      this.kill(`could not be sent a job: ${error.message}`);
      // Gone already: its exit has failed the jobs it had, not this one.
      if (this.exitError) this.jobs.get(id)?.reject(this.exitError);
    });
  }

  /** A job whose answer nobody waits for. */
  private notify(job: Job): void {
    const id = this.nextId++;
    this.dropAnswer(id, 0);
    this.send(id, job);
  }

  private dropAnswer(id: number, limitMs: number): void {
    const timer = limitMs > 0 ? setTimeout(() => this.kill('did not finish a job it was told to stop'), limitMs) : undefined;
    timer?.unref();
    this.dropped.set(id, timer);
  }

  /** Pings, once at a time: the next message of any kind shows the event loop is running. */
  private expectWord(): void {
    if (this.silence || !this.alive) return;
    this.notify(this.options.ping);
    this.silence = setTimeout(() => this.kill('stopped answering'), SILENCE_LIMIT_MS);
    this.silence.unref();
  }

  private receive(message: unknown): void {
    clearTimeout(this.silence);
    this.silence = undefined;
    if (isHostReady(message)) return;
    if (!isHostReply(message)) return this.kill('sent an unexpected message');
    if (this.dropped.has(message.id)) {
      clearTimeout(this.dropped.get(message.id));
      this.dropped.delete(message.id);
      return;
    }
    const job = this.jobs.get(message.id);
    if (!job) return this.kill('sent an unexpected message');
    if (!message.ok) {
      // The engine threw: that job fails, and the process finishes its other jobs but is not trusted with new ones.
      this.retired = true;
      return job.reject(new AppError('ENGINE_FAILED', { cause: this.failure(`failed: ${message.error}`, {}) }));
    }
    // Not settled: whatever state the engine is in, it is killed and its jobs fail once it is gone.
    if (!this.options.isResult(message.result)) return this.kill('sent a malformed result');
    job.resolve(message.result);
  }

  private kill(reason: string): void {
    this.stopped ??= reason;
    this.retired = true;
    this.child.kill('SIGKILL');
  }

  /** Disconnecting makes the host exit by itself; the kill is only a fallback. */
  private retireWhenIdle(): void {
    if (!this.retired || this.jobs.size > 0 || !this.child.connected) return;
    this.child.disconnect();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), RETIRE_GRACE_MS);
    timer.unref();
    void this.exited.then(() => clearTimeout(timer));
  }

  private onExit(status: ExitStatus): void {
    this.retired = true;
    clearTimeout(this.silence);
    for (const timer of this.dropped.values()) clearTimeout(timer);
    this.dropped.clear();
    this.exitError = this.closing
      ? shuttingDown()
      : new AppError('ENGINE_FAILED', { cause: this.failure(this.stopped ?? 'exited during a job', status) });
    for (const job of [...this.jobs.values()]) job.reject(this.exitError);
  }
}

/**
 * One child process that runs all of an engine's jobs, several at once (what it loads is loaded once), started on
 * demand and again after it dies. A crash or a hang fails the jobs in it; a failed job, only itself (the process
 * then finishes the others and is replaced).
 */
export class SharedHost<Job, Result> {
  private current: HostProcess<Job, Result> | undefined;
  private starting: Promise<HostProcess<Job, Result>> | undefined;
  private readonly live = new Set<HostProcess<Job, Result>>();
  private closed = false;

  constructor(private readonly options: SharedHostOptions<Job, Result>) {}

  /** Starts the process ahead of the first job; rejects when it cannot start. */
  async warmUp(): Promise<void> {
    await this.process();
  }

  /** Rejects with an AppError: ENGINE_FAILED, JOB_TIMEOUT (its own time limit), SHUTTING_DOWN or the abort signal's reason. */
  async run(job: Job, { signal }: { signal?: AbortSignal } = {}): Promise<Result> {
    if (this.closed) throw shuttingDown();
    if (signal?.aborted) throw abortError(signal.reason);
    const host = await new Promise<HostProcess<Job, Result>>((resolve, reject) => {
      const onAbort = () => reject(abortError(signal?.reason));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.process()
        .then(resolve, reject)
        .finally(() => signal?.removeEventListener('abort', onAbort));
    });
    return host.run(job, { signal, timeoutMs: this.options.jobTimeoutMs });
  }

  /** PIDs of the running processes (one, and any being retired), for diagnostics and tests. */
  pids(): number[] {
    return [...this.live].flatMap((host) => (host.alive && host.pid !== undefined ? [host.pid] : []));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.starting?.catch(() => undefined);
    await Promise.all([...this.live].map((host) => host.close()));
  }

  private process(): Promise<HostProcess<Job, Result>> {
    if (this.closed) return Promise.reject(shuttingDown());
    if (this.current?.usable) return Promise.resolve(this.current);
    this.starting ??= startTwice(() => HostProcess.start(this.options), () => (this.closed ? shuttingDown() : undefined))
      .then(
      (host) => {
        this.starting = undefined;
        this.live.add(host);
        void host.exited.then(() => this.live.delete(host));
        if (this.closed) {
          void host.close();
          throw shuttingDown();
        }
        this.current = host;
        return host;
      },
      (error: unknown) => {
        this.starting = undefined;
        throw new AppError('ENGINE_FAILED', { cause: error });
      },
    );
    return this.starting;
  }
}
