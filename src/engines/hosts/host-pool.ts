import { AppError, abortError, processFailure } from '../../errors.js';
import type { ProcessLimits, Supervision } from '../../media/process.js';
import { startTwice } from './fork-host.js';

/** A child process that runs engine jobs one at a time. */
export interface EngineHost<Job, Result> {
  readonly pid: number | undefined;
  /** True while the host is alive, idle and may take another job. */
  readonly available: boolean;
  /** Rejects with an AppError: ENGINE_FAILED, JOB_TIMEOUT (its own time limit) or the abort signal's reason; the host is then gone. */
  run(job: Job, limits: ProcessLimits): Promise<Result>;
  /** Stops the process (SIGTERM, then SIGKILL) and resolves once it has exited. */
  close(): Promise<void>;
}

export interface HostPoolOptions<Job, Result> {
  size: number;
  /** Hosts to keep started ahead of demand, to hide their start-up time (busy ones count). */
  warm: number;
  /** Per job, from the moment a host takes it; 0 means no limit. */
  jobTimeoutMs?: number;
  /** Hosts beyond the warm ones are closed after this long idle (their memory given back); default never. */
  idleMs?: number;
  start: () => Promise<EngineHost<Job, Result>>;
}

interface QueuedJob<Job, Result> {
  job: Job;
  signal: AbortSignal | undefined;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
  onAbort: () => void;
}

function shuttingDown(): AppError {
  return new AppError('SHUTTING_DOWN', { message: 'The speech engine is shutting down.' });
}

/** The error a job ends with once its host died: why the host was stopped decides the code. */
export function jobFailure(supervision: Supervision, cause: unknown): AppError {
  return processFailure(supervision, 'ENGINE_FAILED', cause);
}

/**
 * Up to `size` hosts, one job each at a time, jobs queued in order. A host that fails, times out or is
 * aborted is dropped and replaced on demand; aborting a job still in the queue only removes it.
 */
export class HostPool<Job, Result> {
  private readonly idle: EngineHost<Job, Result>[] = [];
  private readonly idleTimers = new Map<EngineHost<Job, Result>, NodeJS.Timeout>();
  private readonly busy = new Set<EngineHost<Job, Result>>();
  private readonly starting = new Set<Promise<void>>();
  private readonly queue: QueuedJob<Job, Result>[] = [];
  private warming = true;
  private closed = false;

  constructor(private readonly options: HostPoolOptions<Job, Result>) {}

  run(job: Job, { signal }: { signal?: AbortSignal } = {}): Promise<Result> {
    if (this.closed) return Promise.reject(shuttingDown());
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    return new Promise<Result>((resolve, reject) => {
      const entry: QueuedJob<Job, Result> = {
        job,
        signal,
        resolve,
        reject,
        onAbort: () => {
          const index = this.queue.indexOf(entry);
          if (index === -1) return;
          this.queue.splice(index, 1);
          reject(abortError(signal?.reason));
        },
      };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      this.queue.push(entry);
      this.pump();
    });
  }

  /** Starts the warm hosts and waits for them; rejects when one cannot start. */
  async warmUp(): Promise<void> {
    this.pump();
    const results = await Promise.allSettled([...this.starting]);
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const entry of this.queue.splice(0)) {
      entry.signal?.removeEventListener('abort', entry.onAbort);
      entry.reject(shuttingDown());
    }
    await Promise.allSettled([...this.starting]);
    for (const host of this.idle) this.clearIdleTimer(host);
    const hosts = [...this.idle.splice(0), ...this.busy];
    await Promise.all(hosts.map((host) => host.close()));
  }

  /** Closes the idle hosts beyond the warm ones (an engine that needed a host only to list its voices). */
  async trim(): Promise<void> {
    // A job's host goes back among the idle just after its caller hears the result: let that happen first.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.idle.length > 0 && this.idle.length + this.busy.size > this.options.warm) {
      const host = this.idle.pop() as EngineHost<Job, Result>;
      this.clearIdleTimer(host);
      void host.close();
    }
  }

  /** PIDs of the running hosts, for diagnostics and tests. */
  pids(): number[] {
    return [...this.idle, ...this.busy].flatMap((host) => (host.pid === undefined ? [] : [host.pid]));
  }

  private pump(): void {
    if (this.closed) return;
    while (this.queue.length > 0) {
      const host = this.takeIdle();
      if (!host) break;
      const entry = this.queue.shift();
      if (entry) this.execute(host, entry);
    }
    // `warm` hosts are kept started in all (busy ones count): more start only for jobs waiting.
    const wanted = Math.max(this.queue.length + this.busy.size, this.warming ? this.options.warm : 0);
    const target = Math.min(this.options.size, wanted);
    while (this.idle.length + this.busy.size + this.starting.size < target) this.startHost();
  }

  private takeIdle(): EngineHost<Job, Result> | undefined {
    while (this.idle.length > 0) {
      const host = this.idle.shift();
      if (host) this.clearIdleTimer(host);
      if (host?.available) return host;
      if (host) void host.close();
    }
    return undefined;
  }

  private startHost(): void {
    const retried = startTwice(this.options.start, () => (this.closed ? shuttingDown() : undefined));
    const started: Promise<void> = retried.then(
      (host) => {
        this.starting.delete(started);
        this.warming = true;
        if (this.closed) return host.close();
        this.makeIdle(host);
        this.pump();
      },
      (error: unknown) => {
        this.starting.delete(started);
        // No retry loop when the engine cannot start at all: the oldest waiting job gets the error,
        // and warm-up resumes only after a host starts again.
        this.warming = false;
        const entry = this.queue.shift();
        if (entry) {
          entry.signal?.removeEventListener('abort', entry.onAbort);
          entry.reject(new AppError('ENGINE_FAILED', { cause: error }));
        }
        this.pump();
        throw error;
      },
    );
    started.catch(() => {
      // Reported to the waiting job above, or to warmUp().
    });
    this.starting.add(started);
  }

  private execute(host: EngineHost<Job, Result>, entry: QueuedJob<Job, Result>): void {
    entry.signal?.removeEventListener('abort', entry.onAbort);
    this.busy.add(host);
    host
      .run(entry.job, { signal: entry.signal, timeoutMs: this.options.jobTimeoutMs })
      .then(entry.resolve, entry.reject)
      .finally(() => {
        this.busy.delete(host);
        if (host.available && !this.closed) this.makeIdle(host);
        else void host.close();
        this.pump();
      });
  }

  /** Back among the idle; beyond the warm ones it is closed if nobody takes it within `idleMs`. */
  private makeIdle(host: EngineHost<Job, Result>): void {
    this.idle.push(host);
    const { idleMs } = this.options;
    if (idleMs === undefined) return;
    const timer = setTimeout(() => {
      this.idleTimers.delete(host);
      const index = this.idle.indexOf(host);
      if (index === -1 || this.idle.length + this.busy.size <= this.options.warm) return;
      this.idle.splice(index, 1);
      void host.close();
    }, idleMs);
    timer.unref();
    this.idleTimers.set(host, timer);
  }

  private clearIdleTimer(host: EngineHost<Job, Result>): void {
    clearTimeout(this.idleTimers.get(host));
    this.idleTimers.delete(host);
  }
}
