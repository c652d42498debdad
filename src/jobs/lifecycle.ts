import { performance } from 'node:perf_hooks';
import type { Config } from '../config.js';
import { abortError, deadlineSignal, isAppError } from '../errors.js';

/** `speech`: the OpenAI-compatible endpoint, whose job lasts until its stream is encoded. */
export type Operation = 'tts' | 'tts-video' | 'speech';

export type JobTimeouts = Pick<Config, 'ttsTimeoutMs' | 'videoTimeoutMs'> & Partial<Pick<Config, 'timeoutMsPerCharacter'>>;

/**
 * The deadline of one job of `operation` on `characters` of text, from its start: the operation's timeout plus
 * TIMEOUT_MS_PER_CHARACTER for each character (70 ms by default, about the speech one character makes: a voice
 * speaking at real time or faster finishes a long text within it. Kokoro, the slowest engine, speaks 5000
 * characters, about 5.5 minutes, in about 2.5 minutes on 2 cores; its deadline is then 6.8 minutes).
 */
export function jobTimeoutMs(timeouts: JobTimeouts, operation: Operation, characters: number): number {
  const base = operation === 'tts-video' ? timeouts.videoTimeoutMs : timeouts.ttsTimeoutMs;
  return base + Math.max(0, characters) * (timeouts.timeoutMsPerCharacter ?? 0);
}

/** Weight of the newest job in the running average of job times (an exponential moving average). */
const AVERAGE_WEIGHT = 0.2;

/** The running average of job times after one more, `seconds` long; the first sample is taken as it is. */
export function movingAverage(previous: number | undefined, seconds: number): number {
  return previous === undefined ? seconds : previous + AVERAGE_WEIGHT * (seconds - previous);
}

export interface JobRun {
  /** Milliseconds left until the job's deadline (a re-run keeps its first run's). */
  deadlineMs: number;
  /** What else stops it: the client, a cancel, the process's shutdown; each aborts with its typed reason. */
  stoppedBy: AbortSignal[];
  /** Told once the job ends: its seconds, and `success` or its error code. */
  onFinished?: (seconds: number, outcome: string) => void;
}

/**
 * One run of a job, the same in the embedded queue and in a Redis worker: `work` gets one signal that aborts with
 * the reason the job is stopped (its deadline, a cancel, the client, shutdown), and a stopped job fails for that
 * reason, whatever a killed process reported on its way down.
 */
export async function runJob<T>(run: JobRun, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const deadline = deadlineSignal(Math.max(0, run.deadlineMs));
  const signal = AbortSignal.any([...run.stoppedBy, deadline.signal]);
  const started = performance.now();
  let outcome = 'success';
  try {
    return await work(signal);
  } catch (thrown) {
    const error = signal.aborted ? abortError(signal.reason) : thrown;
    outcome = isAppError(error) ? error.code : 'INTERNAL_ERROR';
    throw error;
  } finally {
    deadline.clear();
    run.onFinished?.((performance.now() - started) / 1000, outcome);
  }
}
