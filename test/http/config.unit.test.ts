import { describe, expect, it } from 'vitest';
import { ConfigError, SHARED_LIMITS, loadConfig } from '../../src/config.js';

describe('loadConfig', () => {
  it('has no rate limit or per-client caps for a personal service (no keys, loopback), and has them when shared', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1']) {
      expect(loadConfig({ HOST: host })).toMatchObject({ personal: true, rateLimit: { max: 0 }, clientQuota: { maxJobs: 0, characters: 0 } });
    }
    const shared = { personal: false, rateLimit: { max: SHARED_LIMITS.rate }, clientQuota: { maxJobs: SHARED_LIMITS.jobs, characters: SHARED_LIMITS.characters } };
    expect(loadConfig({ HOST: '0.0.0.0' })).toMatchObject(shared);
    expect(loadConfig({ API_KEYS: 'k1' })).toMatchObject(shared);
    // What is set holds either way.
    expect(loadConfig({ RATE_LIMIT_MAX: '5', CLIENT_MAX_JOBS: '3' })).toMatchObject({ rateLimit: { max: 5 }, clientQuota: { maxJobs: 3, characters: 0 } });
    expect(loadConfig({ HOST: '0.0.0.0', RATE_LIMIT_MAX: '0' }).rateLimit.max).toBe(0);
  });

  it('serves on embedded defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, host: '127.0.0.1', cdnUrl: 'http://localhost:3000/files', logLevel: 'info' });
    expect(config.pricing).toEqual({ currency: 'USD', ttsPer1kChars: 0.015, videoPer1kChars: 0.015, videoPerMinute: 0.1 });
    expect(config.concurrency).toBeGreaterThanOrEqual(1);
  });

  it('reads and converts variables', () => {
    const config = loadConfig({ PORT: '8080', HOST: '0.0.0.0', CDN_URL: 'https://cdn.example.com/x/', PRICE_TTS_PER_1K_CHARS: '0.5' });
    expect(config).toMatchObject({ port: 8080, cdnUrl: 'https://cdn.example.com/x' });
    expect(config.pricing.ttsPer1kChars).toBe(0.5);
    expect(loadConfig({ HOST: '0.0.0.0' }).cdnUrl).toBe('http://localhost:3000/files');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['LOG_LEVEL', 'loud'],
    ['CDN_URL', 'ftp://example.com'],
    ['CONCURRENCY', '0'],
    ['PRICE_TTS_PER_1K_CHARS', '-1'],
    ['CURRENCY', 'dollars'],
  ])('stops on %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`\\b${name}=`));
  });
});

describe('QUEUE_NAME', () => {
  it('takes one {hash tag} for Redis Cluster, and nothing that would split the keys or break them', () => {
    for (const name of ['voxreel', '{voxreel}', 'jobs-{eu}', 'a_b']) expect(loadConfig({ QUEUE_NAME: name }).queueName).toBe(name);
    for (const name of ['{a}{b}', 'x}', '{', 'a:b', 'a b']) expect(() => loadConfig({ QUEUE_NAME: name }), name).toThrow(/QUEUE_NAME/);
  });
});
