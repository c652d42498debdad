import { AppError } from '../errors.js';
import { MAX_JOB_TEXT } from '../api/fields.js';
import { MAX_TTS_TEXT, type TtsRequest, type TtsResponse } from '../api/speech.js';
import { MAX_VIDEO_TEXT, type TtsVideoRequest, type TtsVideoResponse } from '../api/video.js';

/** What a job asks for, exactly as its request gave it (minus how to answer): plain data, so it can wait in Redis. */
export type JobSpec = { operation: 'tts'; request: TtsSpec } | { operation: 'tts-video'; request: TtsVideoSpec };
export type TtsSpec = Omit<TtsRequest, AnswerField>;
export type TtsVideoSpec = Omit<TtsVideoRequest, AnswerField>;
/** What says how to answer, not what to make (fields.ts AnswerOptions). */
type AnswerField = 'async' | 'webhook_url' | 'webhook_progress';
export type QueuedOperation = JobSpec['operation'];
export type SpecOf<O extends QueuedOperation> = Extract<JobSpec, { operation: O }>;

/** Short speech jobs go before videos, long jobs after both (lower first); each by its size within its kind would starve nothing more. */
export function jobPriority(spec: JobSpec): number {
  if (isLongJob(spec)) return 3;
  return spec.operation === 'tts' ? 1 : 2;
}

/** Most characters a request of the operation takes at once (synchronously); more make a long job. */
export function syncTextLimit(operation: QueuedOperation): number {
  return operation === 'tts' ? MAX_TTS_TEXT : MAX_VIDEO_TEXT;
}

/**
 * A long job: more text than a request takes at once (up to MAX_JOB_TEXT, asynchronous only). Its audio is spoken
 * into its file as it goes, within the long limits (MAX_LONG_AUDIO_SECONDS...), and checkpointed sentence by
 * sentence so that another run continues it.
 */
export function isLongJob(spec: JobSpec): boolean {
  return textLength(spec.request.text) > syncTextLimit(spec.operation);
}

/** A text over what any request takes at once (MAX_TTS_TEXT and MAX_VIDEO_TEXT are the same): a long job's. */
export function isLongText(characters: number): boolean {
  return characters > Math.max(MAX_TTS_TEXT, MAX_VIDEO_TEXT);
}

/** Characters as the schemas count them (maxLength: code points, an emoji one, not two UTF-16 units). */
export function textLength(text: string): number {
  let surrogatePairs = 0;
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        surrogatePairs += 1;
        index += 1;
      }
    }
  }
  return text.length - surrogatePairs;
}

/** 400 for a long text asked for synchronously: it is taken as an asynchronous job only. */
export function assertAnswerableNow(spec: JobSpec): void {
  if (!isLongJob(spec)) return;
  const limit = syncTextLimit(spec.operation);
  throw new AppError('VALIDATION_ERROR', {
    field: 'text',
    message:
      `The text is ${textLength(spec.request.text)} characters: a request answered at once takes ${limit} at most. ` +
      `A longer one (up to ${MAX_JOB_TEXT}) is a long job: send "async": true (or Prefer: respond-async, or a webhook_url) and follow GET /jobs/{id}.`,
  });
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

/** The request without what only says how to answer (`async`, `webhook_url`, `webhook_progress`). */
export function specOf<T extends { async?: boolean; webhook_url?: string; webhook_progress?: boolean }>(request: T): Omit<T, AnswerField> {
  const spec: T = { ...request };
  delete spec.async;
  delete spec.webhook_url;
  delete spec.webhook_progress;
  return spec;
}
