import type { Voice } from '../../engines/voice.js';
import { FILE_KINDS } from '../../storage/storage.js';
import { effectiveTts, effectiveVideo } from '../executor.js';
import { outcomeOf, type JobOutcome, type JobSpec, type QueuedOperation } from '../spec.js';
import { lookupCached, requestCacheKey, type RequestCache } from './request-cache.js';

/** The storage key (`<kind>/<name>.<ext>`) a file URL of ours points at, whatever comes before it (CDN_URL, a prefix) or after (a signature). */
function keyOfUrl(value: string): string | undefined {
  if (!/^https?:\/\//.test(value)) return undefined;
  try {
    const [kind, name] = new URL(value).pathname.split('/').slice(-2).map(decodeURIComponent);
    return kind && name && (FILE_KINDS as readonly string[]).includes(kind) ? `${kind}/${name}` : undefined;
  } catch {
    return undefined;
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
    /** Whose answers a request may get: its own tenant's (`partition(tenant)` is the tenant), or anyone's (undefined). */
    private readonly partition: (tenant: string) => string | undefined,
    private readonly observer?: ResultCacheObserver,
  ) {}

  /** The cache key of a checked job of `tenant`: the request with every default filled in, the voice and its engine. */
  keyOf(spec: JobSpec, voice: Voice, tenant: string): string | undefined {
    if (!this.cache) return undefined;
    const effective = spec.operation === 'tts' ? effectiveTts(spec.request) : effectiveVideo(spec.request);
    return requestCacheKey(spec.operation, effective, voice, this.partition(tenant));
  }

  async lookup<O extends QueuedOperation>(operation: O, key: string | undefined): Promise<JobOutcome<O> | undefined> {
    if (!this.cache || key === undefined) return undefined;
    const found = await lookupCached(this.cache, this.storage, key).catch(() => undefined);
    this.observer?.requestCache(operation, found !== undefined);
    // Remembered under a key of this operation (the key hashes it), so the body is this operation's.
    return found && outcomeOf(operation, { body: await this.freshUrls(found.body as JobOutcome['body']), files: found.files });
  }

  /**
   * The body with each file's URL made again: a presigned one may be near its expiry (a job read hours after it
   * finished, a cached answer); a public one comes out the same.
   */
  async freshUrls<T extends Record<string, unknown>>(body: T): Promise<T> {
    const fresh: Record<string, unknown> = { ...body };
    for (const [field, value] of Object.entries(body)) {
      const key = typeof value === 'string' ? keyOfUrl(value) : undefined;
      if (key) fresh[field] = await this.storage.urlOf(key);
    }
    return fresh as T;
  }

  async remember(key: string | undefined, outcome: JobOutcome): Promise<void> {
    if (!this.cache || key === undefined) return;
    await this.cache.set(key, { body: outcome.body, files: outcome.files }, this.ttlMs).catch(() => undefined);
  }
}
