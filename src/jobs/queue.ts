import { randomBytes } from 'node:crypto';
import { AppError, type ErrorCode } from '../errors.js';
import type { JobClient } from './admission/slots.js';
import type { JobOutcome, JobSpec, QueuedOperation } from './spec.js';
import type { SpokenSoFar } from '../speech/synthesizer.js';

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** An error as a job keeps it: enough to answer with the same body and status as a synchronous request. */
export interface JobError {
  code: ErrorCode;
  message: string;
  field?: string;
  retryAfter?: number;
}

/** What GET /jobs/{id} shows (times in ISO 8601). */
export interface JobView {
  id: string;
  operation: QueuedOperation;
  state: JobState;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  /** Queued: jobs ahead of this one. */
  position?: number;
  /** Queued or running: seconds until it is expected to finish, from measured job times. */
  etaSeconds?: number;
  /** Queued in Redis: workers alive now; 0 means no ETA until one starts. */
  workers?: number;
  /** Running: 0 to 100. */
  progress?: number;
  /** Running, once it speaks: characters of its text (characters), how many are spoken, and the seconds of audio they make. */
  characters?: number;
  charactersDone?: number;
  secondsDone?: number;
  /** Succeeded: the body a synchronous request gets. */
  result?: JobOutcome['body'];
  /** Failed or cancelled. */
  error?: JobError;
  /** When the job and its result are forgotten. */
  expiresAt?: string;
}

export interface SubmittedJob {
  id: string;
  /** The job's outcome once it has finished; a failed job throws its AppError. */
  outcome(): Promise<JobOutcome>;
}

export interface SubmitOptions {
  /** Its client: quota, and for a synchronous request its disconnect (which cancels the job). */
  client: JobClient;
  /** Asynchronous (202): the job outlives the request; synchronous: it is cancelled when the client goes. */
  detached: boolean;
  /** Told of the result, signed (async jobs only). */
  webhookUrl?: string;
  /** With webhookUrl: also told of each further tenth done (JobFollowUp.progressReporter). */
  webhookProgress?: boolean;
  /** The request cache's key for this job: its outcome is remembered under it. */
  cacheKey?: string;
  /** The answer is already known (the request cache): the job is done as soon as it is made, its webhook called. */
  cached?: JobOutcome;
}

/**
 * Where jobs wait and run: in this process (no REDIS_URL), or in Redis for `voxreel worker` processes. Both keep
 * the same promises: admission is decided at `submit` (a full queue or a client's quota refuses at once), every
 * job keeps its deadline, and a job can be read, awaited and cancelled by id until it expires.
 */
export interface JobQueue {
  /** Queues the job; throws OVERLOADED, RATE_LIMITED or SHUTTING_DOWN when it cannot be taken. */
  submit(spec: JobSpec, options: SubmitOptions): Promise<SubmittedJob>;
  /** The job as its client may see it, or undefined when unknown or expired (synchronous jobs are not kept). */
  get(id: string, clientId: string): Promise<JobView | undefined>;
  /** Cancels a queued or running job; returns its view after, or undefined when unknown. */
  cancel(id: string, clientId: string): Promise<JobView | undefined>;
  /** Refuses new jobs (shutdown). */
  refuseNew(): void;
  close(): Promise<void>;
}

/** A job id: 128 random bits, so knowing it is what lets a client read the job (with its API key, when keys are on). */
export function newJobId(): string {
  return randomBytes(16).toString('base64url');
}

/** Seconds until a job that has `ahead` jobs before it (those running included) finishes, at `concurrency` at once. */
export function etaSeconds(ahead: number, running: number, concurrency: number, jobSeconds: number): number {
  const rounds = Math.floor((ahead + running) / Math.max(1, concurrency)) + 1;
  return Math.max(1, Math.round(rounds * jobSeconds));
}

/** How far a running job is, as the process running it last told (kept in memory, or in Redis for the others to read). */
export interface JobProgress {
  /** 0 to 1. */
  fraction: number;
  spoken?: SpokenSoFar;
}

/** A job's progress as its executor tells it (fraction, and how much of its text is spoken), as queues keep it. */
export function jobProgress(fraction: number, spoken?: SpokenSoFar): JobProgress {
  return spoken ? { fraction, spoken } : { fraction };
}

/** Below this share done, a running job's own pace says too little: its ETA comes from measured job times. */
const OWN_PACE_AFTER = 0.05;

/**
 * The running part of a job's view: percent done, what is spoken, and the seconds left: at this run's own pace once
 * it is some way along (a long job's length is its own, not the average job's; what an earlier run spoke, read back
 * in moments, does not count as this run's work), else from measured job times.
 */
export function runningView(progress: JobProgress | undefined, startedAt: number | undefined, averageJobSeconds: number, now = Date.now()): Pick<JobView, 'progress' | 'etaSeconds' | 'characters' | 'charactersDone' | 'secondsDone'> {
  const fraction = Math.min(1, Math.max(0, progress?.fraction ?? 0));
  const spoken = progress?.spoken;
  const byThisRun = spoken && spoken.characters > 0 ? fraction * ((spoken.characters - spoken.readBack) / spoken.characters) : fraction;
  const ownPace = startedAt !== undefined && byThisRun >= OWN_PACE_AFTER ? ((now - startedAt) / 1000 / byThisRun) * (1 - fraction) : undefined;
  return {
    progress: Math.round(fraction * 100),
    etaSeconds: Math.max(1, Math.round(ownPace ?? averageJobSeconds * (1 - fraction))),
    ...(spoken ? { characters: spoken.totalCharacters, charactersDone: spoken.characters, secondsDone: Math.round(spoken.seconds * 10) / 10 } : {}),
  };
}

/** An error as a job keeps it; an internal one's text stays in the log, as the HTTP error handler does. */
export function jobError(error: AppError): JobError {
  const message = error.code === 'INTERNAL_ERROR' ? 'An unexpected error occurred.' : error.message;
  return { code: error.code, message, ...(error.field ? { field: error.field } : {}), ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }) };
}

/** How a job ended: its outcome, or the error it keeps. */
export type JobResult = { ok: true; outcome: JobOutcome } | { ok: false; error: JobError };

export function cancelledResult(): JobResult {
  return { ok: false, error: jobError(new AppError('JOB_CANCELLED')) };
}

/** When a job was made, started and finished (ms since the epoch), as either queue keeps them. */
export interface JobTimes {
  id: string;
  createdAt: number;
  startedAt?: number;
  finishedAt: number;
}

/** The view of a finished job, the same from either queue, from the process that ran it (its webhook) and from any other. */
export function finishedView(times: JobTimes, operation: QueuedOperation, result: JobResult, retentionMs: number): JobView {
  const base = {
    id: times.id,
    operation,
    createdAt: new Date(times.createdAt).toISOString(),
    ...(times.startedAt ? { startedAt: new Date(times.startedAt).toISOString() } : {}),
    finishedAt: new Date(times.finishedAt).toISOString(),
    expiresAt: new Date(times.finishedAt + retentionMs).toISOString(),
  };
  if (result.ok) return { ...base, state: 'succeeded', progress: 100, result: result.outcome.body };
  return { ...base, state: result.error.code === 'JOB_CANCELLED' ? 'cancelled' : 'failed', error: result.error };
}
