import type { TtsRequest, TtsResponse } from '../api/speech.js';
import type { TtsVideoRequest, TtsVideoResponse } from '../api/video.js';

/** What a job asks for, exactly as its request gave it (minus how to answer): plain data, so it can wait in Redis. */
export type JobSpec = { operation: 'tts'; request: TtsSpec } | { operation: 'tts-video'; request: TtsVideoSpec };
export type TtsSpec = Omit<TtsRequest, 'async' | 'webhook_url'>;
export type TtsVideoSpec = Omit<TtsVideoRequest, 'async' | 'webhook_url'>;
export type QueuedOperation = JobSpec['operation'];
export type SpecOf<O extends QueuedOperation> = Extract<JobSpec, { operation: O }>;

/** Short speech jobs go before videos (lower first); each by its size within its kind would starve nothing more. */
export function jobPriority(spec: JobSpec): number {
  return spec.operation === 'tts' ? 1 : 2;
}

/** The body a synchronous request of each operation gets (the API's response schemas). */
export interface JobAnswers {
  tts: TtsResponse;
  'tts-video': TtsVideoResponse;
}

/** What a finished job answers with: the body a synchronous request gets, and the stored files it points at. */
export interface JobOutcome<O extends QueuedOperation = QueuedOperation> {
  body: JobAnswers[O];
  files: string[];
}

/**
 * A job's outcome as its operation's: queues and caches keep the outcomes of every operation side by side, and a
 * job's outcome is always the one the executor made for its own operation (type-checked there).
 */
export function outcomeOf<O extends QueuedOperation>(_operation: O, outcome: JobOutcome): JobOutcome<O> {
  return outcome as JobOutcome<O>;
}

/** The request without what only says how to answer (`async`, `webhook_url`). */
export function specOf<T extends { async?: boolean; webhook_url?: string }>(request: T): Omit<T, 'async' | 'webhook_url'> {
  const spec: T = { ...request };
  delete spec.async;
  delete spec.webhook_url;
  return spec;
}
