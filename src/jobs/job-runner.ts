import { performance } from 'node:perf_hooks';
import { AppError, isAppError } from '../errors.js';
import type { Limiter } from './limiter.js';

/** `speech`: the OpenAI-compatible endpoint, whose job lasts until its stream is encoded. */
export type Operation = 'tts' | 'tts-video' | 'speech';

export interface JobObserver {
  jobFinished(operation: Operation, seconds: number, outcome: string): void;
}

/**
 * Every synthesis and render runs through here: one limiter slot, a per-operation deadline and the client's
 * disconnect both abort the job's signal, so its processes are killed and its temporary files removed.
 */
export class JobRunner {
  constructor(
    private readonly limiter: Limiter,
    private readonly timeoutsMs: Record<Operation, number>,
    private readonly observer?: JobObserver,
  ) {}

  run<T>(operation: Operation, clientSignal: AbortSignal, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return this.limiter.run(async () => {
      const deadline = AbortSignal.timeout(this.timeoutsMs[operation]);
      const signal = AbortSignal.any([clientSignal, deadline]);
      const started = performance.now();
      let outcome = 'success';
      try {
        return await work(signal);
      } catch (error) {
        const failure = deadline.aborted && !clientSignal.aborted ? new AppError('JOB_TIMEOUT', { cause: error }) : error;
        outcome = isAppError(failure) ? failure.code : 'INTERNAL_ERROR';
        throw failure;
      } finally {
        this.observer?.jobFinished(operation, (performance.now() - started) / 1000, outcome);
      }
    }, clientSignal);
  }
}
