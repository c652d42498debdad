import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { version } from '../../version.js';

/** What a finished request answered, and the stored files its answer points at. */
export interface CachedResult {
  body: Record<string, unknown>;
  /** Storage keys (`<kind>/<name>.<ext>`) of every file the body points at. */
  files: string[];
}

/** Results of finished requests by `requestCacheKey`. */
export interface RequestCache {
  get(key: string): Promise<CachedResult | undefined>;
  /** Kept for `ttlMs` (Infinity: until evicted); 0 or less: not kept. */
  set(key: string, value: CachedResult, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
}

/** Request fields that change how the answer is delivered, not what it is. */
const DELIVERY_FIELDS = new Set(['async', 'webhook_url']);

/**
 * The text as the cache compares it: NFC, line breaks as LF, runs of spaces and tabs as one space, trimmed. The
 * engines speak such texts alike and the files show the same words on the same lines.
 */
export function normalizeCacheText(text: string): string {
  return text
    .normalize('NFC')
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+/g, ' ')
    .trim();
}

/**
 * The key of a request in the request cache: a SHA-256 (hex) of the operation, the text, the resolved voice and
 * engine, the voxreel version and every other field of `request`, whatever their order (`async` and `webhook_url`
 * left out; `voice` is replaced by the resolved id, so every spelling of one voice is one key).
 *
 * `request` must hold the EFFECTIVE options, defaults filled in by the caller: `{ text, format: 'mp3' }` and
 * `{ text }` are different keys otherwise. The text is the `text` field; it is normalised (`normalizeCacheText`)
 * unless `timestamps` is true, as word timestamps are offsets into the text exactly as sent. `partition`: whose
 * cache (a tenant under CACHE_SCOPE=tenant; undefined when shared).
 */
export function requestCacheKey(operation: string, request: Record<string, unknown>, voice: { id: string; engine: string }, partition?: string): string {
  const options: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(request)) {
    if (name !== 'text' && name !== 'voice' && !DELIVERY_FIELDS.has(name)) options[name] = value;
  }
  const { text } = request;
  const exact = request.timestamps === true;
  const identity = {
    operation,
    text: typeof text === 'string' && !exact ? normalizeCacheText(text) : text,
    voice: voice.id,
    engine: voice.engine,
    version,
    options,
    partition,
  };
  return createHash('sha256').update(canonicalJson(identity)).digest('hex');
}

/** JSON with the keys of every object sorted and undefined members left out, so equal values give equal strings. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The cached result for `key` while every file it points at still exists (retention may have removed them); an
 * entry whose files are gone is deleted. Errors of the cache or the storage are the caller's (a miss is a safe answer).
 */
export async function lookupCached(
  cache: RequestCache,
  storage: { exists(key: string): Promise<boolean> },
  key: string,
): Promise<CachedResult | undefined> {
  const cached = await cache.get(key);
  if (!cached) return undefined;
  const present = await Promise.all(cached.files.map((file) => storage.exists(file)));
  if (present.every(Boolean)) return cached;
  await cache.delete(key);
  return undefined;
}

/** In this process: at most `maxEntries`, the least recently used dropped first; 0 keeps nothing. */
export class MemoryRequestCache implements RequestCache {
  private readonly entries = new Map<string, { value: CachedResult; expires: number }>();

  constructor(
    readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Entries held, expired ones not yet dropped included. */
  get size(): number {
    return this.entries.size;
  }

  async get(key: string): Promise<CachedResult | undefined> {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expires <= this.now()) return undefined;
    this.entries.set(key, entry);
    return structuredClone(entry.value);
  }

  async set(key: string, value: CachedResult, ttlMs: number): Promise<void> {
    if (this.maxEntries <= 0 || !(ttlMs > 0)) return;
    this.entries.delete(key);
    this.entries.set(key, { value: structuredClone(value), expires: this.now() + ttlMs });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(oldest);
    }
  }

  async delete(key: string): Promise<void> {
    this.entries.delete(key);
  }
}

/**
 * Shared by every process on one Redis: `<prefix>:cache:<key>` holds the result as JSON, with the TTL as its PX
 * expiry. There is no count limit here: entries are bounded by their TTL (set it to the files' retention, so they go
 * together) and by Redis' `maxmemory` with an eviction policy. A Redis that also holds the job queue must keep
 * `maxmemory-policy noeviction` (BullMQ needs it): then the TTL alone bounds the cache, and a full Redis fails `set`.
 */
export class RedisRequestCache implements RequestCache {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    /** At most this many entries: an index by time of writing drops the oldest beyond it. */
    private readonly maxEntries = Infinity,
  ) {}

  async get(key: string): Promise<CachedResult | undefined> {
    const raw = await this.redis.get(this.redisKey(key));
    if (raw === null) return undefined;
    const value = parseCachedResult(raw);
    if (!value) await this.delete(key);
    return value;
  }

  async set(key: string, value: CachedResult, ttlMs: number): Promise<void> {
    if (!(ttlMs > 0)) return;
    const json = JSON.stringify(value);
    if (Number.isFinite(ttlMs)) await this.redis.set(this.redisKey(key), json, 'PX', Math.ceil(ttlMs));
    else await this.redis.set(this.redisKey(key), json);
    if (Number.isFinite(this.maxEntries)) await this.trim(key);
  }

  /** Indexes `key` and drops the oldest entries beyond maxEntries (an entry already expired is dropped from the index alike). */
  private async trim(key: string): Promise<void> {
    const index = `${this.prefix}:cache-index`;
    const [, [, count]] = (await this.redis.multi().zadd(index, Date.now(), key).zcard(index).exec()) as [unknown, [unknown, number]];
    if (count <= this.maxEntries) return;
    const oldest = await this.redis.zpopmin(index, count - this.maxEntries);
    const keys = oldest.filter((_, i) => i % 2 === 0);
    if (keys.length > 0) await this.redis.del(...keys.map((old) => this.redisKey(old)));
  }

  async delete(key: string): Promise<void> {
    await this.redis.del(this.redisKey(key));
    if (Number.isFinite(this.maxEntries)) await this.redis.zrem(`${this.prefix}:cache-index`, key);
  }

  private redisKey(key: string): string {
    return `${this.prefix}:cache:${key}`;
  }
}

/** A stored value, or undefined when it is not one (written by another version, or damaged). */
function parseCachedResult(raw: string): CachedResult | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { body, files } = value as Record<string, unknown>;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  if (!Array.isArray(files) || !files.every((file): file is string => typeof file === 'string')) return undefined;
  return { body: body as Record<string, unknown>, files };
}
