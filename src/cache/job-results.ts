import type { Voice } from '../engines/voice.js';
import { effectiveTts, videoJob } from '../jobs/executor.js';
import type { JobOutcome, JobSpec, QueuedOperation } from '../jobs/spec.js';
import { lookupCached, requestCacheKey, type RequestCache } from './request-cache.js';

/** Whether a URL names this storage key as its path's end (a presigned URL's query after it). */
function pointsAt(url: string, key: string): boolean {
  try {
    return decodeURIComponent(new URL(url).pathname).endsWith(`/${key}`);
  } catch {
    return false;
  }
}

export interface ResultCacheObserver {
  requestCache(operation: string, hit: boolean): void;
}

/**
 * Finished jobs' answers by what they asked for, so an identical request gets the earlier file at once while the
 * file exists. A cache that fails is a miss (and a failed write is forgotten): the job just runs.
 */
export class JobResults {
  constructor(
    private readonly cache: RequestCache | undefined,
    private readonly storage: { exists(key: string): Promise<boolean>; urlOf(key: string): Promise<string> },
    /** How long an answer is kept: the files' retention (and a presigned URL's life when shorter). */
    private readonly ttlMs: number,
    private readonly observer?: ResultCacheObserver,
  ) {}

  /** The cache key of a checked job: the request with every default filled in, the voice and its engine. */
  keyOf(spec: JobSpec, voice: Voice): string | undefined {
    if (!this.cache) return undefined;
    const effective = spec.operation === 'tts' ? effectiveTts(spec.request) : { ...spec.request, ...videoJob(spec.request), loudness: spec.request.loudness ?? -14 };
    return requestCacheKey(spec.operation, effective, voice);
  }

  async lookup(operation: QueuedOperation, key: string | undefined): Promise<JobOutcome | undefined> {
    if (!this.cache || key === undefined) return undefined;
    const found = await lookupCached(this.cache, this.storage, key).catch(() => undefined);
    this.observer?.requestCache(operation, found !== undefined);
    return found && { body: await this.freshUrls(found.body as JobOutcome['body'], found.files), files: found.files };
  }

  /** The body with each file's URL made again: a presigned one may be near its expiry, a public one comes out the same. */
  private async freshUrls(body: JobOutcome['body'], files: readonly string[]): Promise<JobOutcome['body']> {
    const fresh = { ...body };
    for (const file of files) {
      const url = await this.storage.urlOf(file);
      for (const [field, value] of Object.entries(fresh)) {
        if (typeof value === 'string' && value !== url && pointsAt(value, file)) (fresh as Record<string, unknown>)[field] = url;
      }
    }
    return fresh;
  }

  async remember(key: string | undefined, outcome: JobOutcome): Promise<void> {
    if (!this.cache || key === undefined) return;
    await this.cache.set(key, { body: outcome.body, files: outcome.files }, this.ttlMs).catch(() => undefined);
  }
}
