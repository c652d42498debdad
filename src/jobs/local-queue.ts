import { AppError, cancelReason, isAppError } from '../errors.js';
import type { FinishedJob, RunningJob } from './follow-up.js';
import type { JobExecutor } from './executor.js';
import type { JobSlots } from './admission/slots.js';
import { etaSeconds, finishedView, jobError, jobProgress, newJobId, runningView, type JobProgress, type JobQueue, type JobResult, type JobView, type SubmitOptions, type SubmittedJob } from './queue.js';
import { jobPriority, type JobOutcome, type JobSpec } from './spec.js';

interface LocalJob {
  id: string;
  spec: JobSpec;
  clientId: string;
  priority: number;
  /** Arrival order (times can tie within a millisecond). */
  sequence: number;
  /** Until it has finished; then `result` says how. */
  state: 'queued' | 'running';
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  result?: JobResult;
  progress?: JobProgress;
  controller: AbortController;
  done: Promise<JobOutcome>;
  expiry?: NodeJS.Timeout;
}

/** Detached jobs kept in memory at most (finished ones beyond it are forgotten early, see `keep`). */
const MAX_KEPT_JOBS = 10_000;

/** The embedded queue: jobs run in this process through the job runner (its limiter, quotas and deadlines), kept in memory until they expire. */
export class LocalJobQueue implements JobQueue {
  /** Detached jobs, to be read by id until they expire (at most `maxKeptJobs`, see `keep`). */
  private readonly jobs = new Map<string, LocalJob>();
  /** The same jobs by client, oldest first: a full store forgets the jobs of the client that holds most. */
  private readonly byClient = new Map<string, Set<LocalJob>>();
  /** Every job not yet finished, detached or not: what a queued job's position counts. */
  private readonly unfinished = new Set<LocalJob>();
  private submitted = 0;

  constructor(
    private readonly runner: JobSlots,
    private readonly executor: JobExecutor,
    private readonly options: {
      retentionMs: number;
      onFinished?: (job: FinishedJob) => void;
      /** What tells a running job's webhook of its progress, where it asked (JobFollowUp.progressReporter). */
      progressReporter?: (job: RunningJob) => ((progress: JobProgress) => void) | undefined;
      onWarning?: (message: string, cause: unknown) => void;
      /** Detached jobs kept at most (default 10,000). */
      maxKeptJobs?: number;
    },
  ) {}

  async submit(spec: JobSpec, options: SubmitOptions): Promise<SubmittedJob> {
    const id = newJobId();
    const controller = new AbortController();
    const signal = options.detached ? controller.signal : AbortSignal.any([controller.signal, options.client.signal]);
    const job = { id, spec, clientId: options.client.id, priority: jobPriority(spec), sequence: this.submitted++, state: 'queued', createdAt: Date.now(), controller } as LocalJob;
    // A cached answer is a job already done: it takes no slot and no share of the client's quota.
    const running = options.cached
      ? Promise.resolve(options.cached)
      : this.runner.admit(spec.operation, { ...options.client, signal }, job.priority)((jobSignal) => {
          job.state = 'running';
          job.startedAt = Date.now();
          const { webhookUrl, webhookProgress } = options;
          const report = this.options.progressReporter?.({ id, operation: spec.operation, createdAt: job.createdAt, startedAt: job.startedAt, webhookUrl, webhookProgress });
          return this.executor.execute(spec, {
            signal: jobSignal,
            tenant: job.clientId,
            onProgress: (fraction, spoken) => {
              job.progress = jobProgress(fraction, spoken);
              report?.(job.progress);
            },
            onWarning: this.options.onWarning,
          });
        });
    this.unfinished.add(job);
    job.done = running.then(
      (outcome) => this.finish(job, options, outcome),
      (error: unknown) => this.finish(job, options, undefined, error),
    );
    // A synchronous job is awaited by its request and forgotten; a detached one is kept to be read, and awaited by nobody.
    if (options.detached) {
      job.done.catch(() => undefined);
      this.keep(job);
    }
    return { id, outcome: () => job.done };
  }

  async get(id: string, clientId: string): Promise<JobView | undefined> {
    const job = this.jobs.get(id);
    return job && job.clientId === clientId ? this.view(job) : undefined;
  }

  async cancel(id: string, clientId: string): Promise<JobView | undefined> {
    const job = this.jobs.get(id);
    if (!job || job.clientId !== clientId) return undefined;
    if (!job.result) {
      job.controller.abort(cancelReason('JOB_CANCELLED'));
      await job.done.catch(() => undefined);
    }
    return this.view(job);
  }

  refuseNew(): void {
    this.runner.refuseNew();
  }

  async close(): Promise<void> {
    for (const job of this.jobs.values()) clearTimeout(job.expiry);
    this.jobs.clear();
    this.byClient.clear();
  }

  /**
   * Keeps a detached job to be read. Past the store's size the oldest finished job of the client that holds most
   * is forgotten early: one client's flood (cached answers take no slot) pushes out its own jobs, never another's.
   */
  private keep(job: LocalJob): void {
    this.jobs.set(job.id, job);
    const own = this.byClient.get(job.clientId) ?? new Set<LocalJob>();
    own.add(job);
    this.byClient.set(job.clientId, own);
    if (this.jobs.size <= (this.options.maxKeptJobs ?? MAX_KEPT_JOBS)) return;
    const clients = [...this.byClient.values()].sort((a, b) => b.size - a.size);
    for (const jobs of clients) {
      const finished = [...jobs].find((kept) => kept.result !== undefined);
      if (finished) return this.forget(finished);
    }
  }

  private forget(job: LocalJob): void {
    clearTimeout(job.expiry);
    this.jobs.delete(job.id);
    const own = this.byClient.get(job.clientId);
    own?.delete(job);
    if (own?.size === 0) this.byClient.delete(job.clientId);
  }

  private finish(job: LocalJob, submitted: SubmitOptions, outcome?: JobOutcome, error?: unknown): JobOutcome {
    job.finishedAt = Date.now();
    this.unfinished.delete(job);
    if (submitted.detached) {
      job.expiry = setTimeout(() => this.forget(job), this.options.retentionMs);
      job.expiry.unref();
    }
    const failure = outcome ? undefined : isAppError(error) ? error : new AppError('INTERNAL_ERROR', { cause: error });
    job.result = outcome ? { ok: true, outcome } : { ok: false, error: jobError(failure as AppError) };
    // A synchronous job's failure is its request's error (logged with it); an asynchronous one has no request left.
    if (failure && submitted.detached) this.options.onWarning?.(`async job ${job.id} failed: ${failure.code}`, failure);
    this.options.onFinished?.({ spec: job.spec, clientId: job.clientId, view: this.view(job), outcome, cacheKey: submitted.cacheKey, webhookUrl: submitted.webhookUrl });
    if (failure) throw failure;
    return outcome as JobOutcome;
  }

  private view(job: LocalJob): JobView {
    const { id, createdAt, startedAt, finishedAt, result } = job;
    const operation = job.spec.operation;
    if (result) return finishedView({ id, createdAt, startedAt, finishedAt: finishedAt ?? Date.now() }, operation, result, this.options.retentionMs);
    const base = {
      id,
      operation,
      state: job.state,
      createdAt: new Date(createdAt).toISOString(),
      ...(startedAt ? { startedAt: new Date(startedAt).toISOString() } : {}),
    };
    const jobSeconds = this.runner.expectedSeconds(operation);
    if (job.state === 'running') return { ...base, ...runningView(job.progress, startedAt, jobSeconds) };
    const others = [...this.unfinished];
    const ahead = others.filter((other) => other.state === 'queued' && isAhead(other, job)).length;
    const running = others.filter((other) => other.state === 'running').length;
    return { ...base, position: ahead, etaSeconds: etaSeconds(ahead, running, this.runner.concurrency, jobSeconds) };
  }
}

/** Whether `other` goes before `job` in the limiter's order (priority, then arrival). */
function isAhead(other: LocalJob, job: LocalJob): boolean {
  return other.priority < job.priority || (other.priority === job.priority && other.sequence < job.sequence);
}
