import type { TtsRequest } from '../api/speech.js';
import type { TtsVideoRequest } from '../api/video.js';

/** What a job asks for, exactly as its request gave it (minus how to answer): plain data, so it can wait in Redis. */
export type JobSpec = { operation: 'tts'; request: TtsSpec } | { operation: 'tts-video'; request: TtsVideoSpec };
export type TtsSpec = Omit<TtsRequest, 'async' | 'webhook_url'>;
export type TtsVideoSpec = Omit<TtsVideoRequest, 'async' | 'webhook_url'>;
export type QueuedOperation = JobSpec['operation'];

/** Short speech jobs go before videos (lower first); each by its size within its kind would starve nothing more. */
export function jobPriority(spec: JobSpec): number {
  return spec.operation === 'tts' ? 1 : 2;
}

/** What a finished job answers with: the body a synchronous request gets, and the stored files it points at. */
export interface JobOutcome {
  body: Record<string, unknown> & { status: 'success'; url: string; duration: number; cost: number };
  files: string[];
}

/** The request without what only says how to answer (`async`, `webhook_url`). */
export function specOf<T extends { async?: boolean; webhook_url?: string }>(request: T): Omit<T, 'async' | 'webhook_url'> {
  const spec: T = { ...request };
  delete spec.async;
  delete spec.webhook_url;
  return spec;
}
