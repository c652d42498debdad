import { access, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MemoryRequestCache,
  RedisRequestCache,
  lookupCached,
  normalizeCacheText,
  requestCacheKey,
  type CachedResult,
  type RequestCache,
} from '../../src/jobs/results/request-cache.js';
import { useRedis } from '../helpers/redis-server.js';
import { useTempDir } from '../helpers/temp-dir.js';

const VOICE = { id: 'espeak-ng:en-us', engine: 'espeak-ng' };
const REQUEST = { text: 'Hello there. How are you?', voice: 'espeak-ng:en-us', format: 'mp3', speed: 1, timestamps: false, loudness: false };
const RESULT: CachedResult = { body: { status: 'success', url: 'http://files.example/audio/abc.mp3', duration: 1.5 }, files: ['audio/abc.mp3'] };

describe('requestCacheKey', () => {
  const key = (request: Record<string, unknown>, operation = 'tts', voice = VOICE) => requestCacheKey(operation, request, voice);

  it('is a SHA-256 in hex', () => {
    expect(key(REQUEST)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the same for the same text written differently: NFC or NFD, CRLF or LF, extra spaces and tabs', () => {
    const composed = 'Caf\u00e9 au lait.\nSecond line.';
    const decomposed = 'Cafe\u0301 au lait.\r\nSecond line.';
    expect(composed).not.toBe(decomposed);
    expect(key({ ...REQUEST, text: decomposed })).toBe(key({ ...REQUEST, text: composed }));
    expect(key({ ...REQUEST, text: '  Hello \t there.   How are  you?\n' })).toBe(key(REQUEST));
    expect(normalizeCacheText(' Cafe\u0301\t\t au  lait.\r\nNext. ')).toBe('Caf\u00e9 au lait.\nNext.');
  });

  it('is the same whatever the order of the fields, nested ones included', () => {
    const video = { text: 'Hi.', voice: 'x', captions: { style: 'bold', size: 1 }, resolution: '1080x1920' };
    const reordered = { resolution: '1080x1920', captions: { size: 1, style: 'bold' }, voice: 'x', text: 'Hi.' };
    expect(key(reordered, 'tts-video')).toBe(key(video, 'tts-video'));
    expect(key({ loudness: false, timestamps: false, speed: 1, format: 'mp3', voice: 'espeak-ng:en-us', text: REQUEST.text })).toBe(key(REQUEST));
  });

  it('ignores how the answer is delivered (async, webhook_url) and how the voice was spelled', () => {
    expect(key({ ...REQUEST, async: true, webhook_url: 'https://example.com/hook' })).toBe(key(REQUEST));
    expect(key({ ...REQUEST, voice: 'ESPEAK-NG:EN-US' })).toBe(key(REQUEST));
    expect(key({ ...REQUEST, undefinedField: undefined })).toBe(key(REQUEST));
  });

  it('differs for another voice, engine, speed, option, operation or text', () => {
    const base = key(REQUEST);
    const others = [
      key(REQUEST, 'tts', { id: 'espeak-ng:en-gb', engine: 'espeak-ng' }),
      key(REQUEST, 'tts', { id: 'espeak-ng:en-us', engine: 'flite' }),
      key({ ...REQUEST, speed: 1.25 }),
      key({ ...REQUEST, format: 'wav' }),
      key({ ...REQUEST, loudness: -16 }),
      key({ ...REQUEST, timestamps: true }),
      key(REQUEST, 'tts-video'),
      key({ ...REQUEST, text: 'Hello there. How are they?' }),
      key({ ...REQUEST, text: 'Hello there.\nHow are you?' }),
      // A default the caller left out is another request: callers pass the effective options.
      key({ text: REQUEST.text, voice: REQUEST.voice }),
    ];
    expect(new Set([base, ...others]).size).toBe(others.length + 1);
  });

  it('keeps the exact text with timestamps, whose offsets point into the text as sent', () => {
    const timed = { ...REQUEST, timestamps: true };
    expect(key({ ...timed, text: `${REQUEST.text} ` })).not.toBe(key(timed));
    expect(key({ ...timed, text: 'Caf\u00e9.' })).not.toBe(key({ ...timed, text: 'Cafe\u0301.' }));
  });
});

describe('MemoryRequestCache', () => {
  it('keeps at most maxEntries, dropping the least recently used', async () => {
    const cache = new MemoryRequestCache(2);
    await cache.set('a', RESULT, 60_000);
    await cache.set('b', RESULT, 60_000);
    expect(await cache.get('a')).toEqual(RESULT);
    await cache.set('c', RESULT, 60_000);
    expect(cache.size).toBe(2);
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('a')).toEqual(RESULT);
    expect(await cache.get('c')).toEqual(RESULT);
  });

  it('forgets an entry when its time is up', async () => {
    let now = 1_000;
    const cache = new MemoryRequestCache(10, () => now);
    await cache.set('short', RESULT, 500);
    await cache.set('forever', RESULT, Infinity);
    now += 499;
    expect(await cache.get('short')).toEqual(RESULT);
    now += 1;
    expect(await cache.get('short')).toBeUndefined();
    expect(cache.size).toBe(1);
    now += 1e12;
    expect(await cache.get('forever')).toEqual(RESULT);
  });

  it('expires on the real clock too', async () => {
    const cache = new MemoryRequestCache(10);
    await cache.set('k', RESULT, 30);
    expect(await cache.get('k')).toEqual(RESULT);
    await delay(60);
    expect(await cache.get('k')).toBeUndefined();
  });

  it('keeps nothing with maxEntries 0 or a TTL of 0, and deletes on request', async () => {
    const off = new MemoryRequestCache(0);
    await off.set('k', RESULT, 60_000);
    expect(await off.get('k')).toBeUndefined();
    const cache = new MemoryRequestCache(10);
    await cache.set('zero', RESULT, 0);
    expect(await cache.get('zero')).toBeUndefined();
    await cache.set('k', RESULT, 60_000);
    await cache.delete('k');
    expect(await cache.get('k')).toBeUndefined();
  });

  it('hands out copies: a caller changing the body does not change the cache', async () => {
    const cache = new MemoryRequestCache(10);
    const value = structuredClone(RESULT);
    await cache.set('k', value, 60_000);
    value.body.url = 'changed after set';
    const first = await cache.get('k');
    if (first) first.body.cached = true;
    expect(await cache.get('k')).toEqual(RESULT);
  });
});

describe('RedisRequestCache', () => {
  const redisServer = useRedis();
  let redis: Redis;
  let cache: RedisRequestCache;
  beforeAll(() => {
    redis = new Redis(redisServer.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
    cache = new RedisRequestCache(redis, 'voxreel-test');
  });
  afterAll(async () => {
    await redis?.quit();
  });

  it('stores the result as JSON under <prefix>:cache:<key> with the TTL as its expiry', async () => {
    const key = requestCacheKey('tts', REQUEST, VOICE);
    await cache.set(key, RESULT, 60_000);
    expect(await cache.get(key)).toEqual(RESULT);
    const redisKey = `voxreel-test:cache:${key}`;
    expect(JSON.parse((await redis.get(redisKey)) ?? 'null')).toEqual(RESULT);
    const ttl = await redis.pttl(redisKey);
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await cache.delete(key);
    expect(await redis.exists(redisKey)).toBe(0);
    expect(await cache.get(key)).toBeUndefined();
  });

  it('forgets an entry when its time is up', async () => {
    await cache.set('expiring', RESULT, 50);
    expect(await cache.get('expiring')).toEqual(RESULT);
    await delay(150);
    expect(await cache.get('expiring')).toBeUndefined();
  });

  it('keeps an entry with an endless TTL without expiry, and none with a TTL of 0', async () => {
    await cache.set('forever', RESULT, Infinity);
    expect(await redis.pttl('voxreel-test:cache:forever')).toBe(-1);
    await cache.set('zero', RESULT, 0);
    expect(await redis.exists('voxreel-test:cache:zero')).toBe(0);
  });

  it('treats a value it cannot read as a miss and removes it', async () => {
    await redis.set('voxreel-test:cache:damaged', '{"body": "not an object"}');
    expect(await cache.get('damaged')).toBeUndefined();
    expect(await redis.exists('voxreel-test:cache:damaged')).toBe(0);
  });

  it('keeps at most maxEntries, dropping the oldest', async () => {
    const bounded = new RedisRequestCache(redis, 'voxreel-bounded', 3);
    for (const key of ['a', 'b', 'c', 'd', 'e']) {
      await bounded.set(key, RESULT, 60_000);
      await delay(2);
    }
    expect(await bounded.get('a')).toBeUndefined();
    expect(await bounded.get('b')).toBeUndefined();
    for (const key of ['c', 'd', 'e']) expect(await bounded.get(key)).toEqual(RESULT);
    expect(await redis.zcard('voxreel-bounded:cache-index')).toBe(3);
  });

  it('is shared: another client with the same prefix sees the entry, one with another prefix does not', async () => {
    const other = new Redis(redisServer.url);
    try {
      await cache.set('shared', RESULT, 60_000);
      expect(await new RedisRequestCache(other, 'voxreel-test').get('shared')).toEqual(RESULT);
      expect(await new RedisRequestCache(other, 'another-queue').get('shared')).toBeUndefined();
    } finally {
      await other.quit();
    }
  });
});

describe('lookupCached', () => {
  const root = useTempDir('voxreel-request-cache-');
  /** The files of a temporary folder, as storage keys. */
  const storage = {
    exists: (key: string) =>
      access(path.join(root, key)).then(
        () => true,
        () => false,
      ),
  };

  async function cacheWithFiles(files: string[]): Promise<RequestCache> {
    for (const file of files) {
      await mkdir(path.dirname(path.join(root, file)), { recursive: true });
      await writeFile(path.join(root, file), 'data');
    }
    const cache = new MemoryRequestCache(10);
    await cache.set('k', { body: { url: files[0] }, files }, 60_000);
    return cache;
  }

  it('answers while every file is there', async () => {
    const cache = await cacheWithFiles(['audio/kept.mp3', 'captions/kept.vtt']);
    expect(await lookupCached(cache, storage, 'k')).toEqual({ body: { url: 'audio/kept.mp3' }, files: ['audio/kept.mp3', 'captions/kept.vtt'] });
    expect(await lookupCached(cache, storage, 'missing')).toBeUndefined();
  });

  it('drops an entry one of whose files is gone', async () => {
    const cache = await cacheWithFiles(['audio/gone.mp3', 'captions/gone.vtt']);
    await rm(path.join(root, 'captions/gone.vtt'));
    expect(await lookupCached(cache, storage, 'k')).toBeUndefined();
    // Deleted, not only skipped: the file coming back does not revive it.
    await writeFile(path.join(root, 'captions/gone.vtt'), 'data');
    expect(await cache.get('k')).toBeUndefined();
  });
});
