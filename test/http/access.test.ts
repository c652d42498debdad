import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { FailedKeys } from '../../src/http/plugins/access.js';
import type { ErrorBody } from '../../src/api/errors.js';
import type { OpenAiErrorBody } from '../../src/api/openai.js';
import { buildTestApp, useTestApp, type TestApp } from '../helpers/helpers.js';
import { useTempDir } from '../helpers/temp-dir.js';

const keysFile = path.join(useTempDir('voxreel-keys-'), 'keys');
writeFileSync(keysFile, '# operators\nfile-key-1\n\nfile-key-2\n');
const keyed = useTestApp({ API_KEYS: 'env-key-1, env-key-2', API_KEYS_FILE: keysFile, RATE_LIMIT_MAX: '3', CORS_ORIGINS: 'https://app.example' });

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

describe('API keys', () => {
  it('refuses API routes without a valid key', async () => {
    for (const headers of [{}, auth('wrong'), { authorization: 'env-key-1' }, { authorization: 'Basic ZW52LWtleS0x' }]) {
      const response = await keyed.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Hi.', voice: 'espeak-ng:en-us' }, headers });
      expect(response.statusCode).toBe(401);
      expect(response.json<ErrorBody>().error.code).toBe('UNAUTHORIZED');
    }
    expect((await keyed.app.inject({ method: 'GET', url: '/voices' })).statusCode).toBe(401);
    expect(await keyed.listFiles()).toEqual([]);
  });

  it('accepts keys from the list and from the file', async () => {
    for (const key of ['env-key-1', 'file-key-2']) {
      const response = await keyed.app.inject({ method: 'GET', url: '/voices?language=fr', headers: auth(key) });
      expect(response.statusCode, response.body).toBe(200);
    }
    const speech = await keyed.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Hi.', voice: 'espeak-ng:en-us' }, headers: auth('env-key-2') });
    expect(speech.statusCode, speech.body).toBe(200);
    const served = await keyed.fetchFile(speech.json<{ url: string }>().url);
    expect(served.statusCode).toBe(200); // generated files are public
  });

  it('keeps health, metrics and docs public', async () => {
    for (const url of ['/healthz', '/readyz', '/metrics', '/docs', '/docs/json']) {
      const response = await keyed.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBeLessThan(400);
    }
  });

  it('rate-limits per key with Retry-After', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      statuses.push((await keyed.app.inject({ method: 'GET', url: '/voices?language=de', headers: auth('file-key-1') })).statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await keyed.app.inject({ method: 'GET', url: '/voices?language=de', headers: auth('file-key-1') });
    expect(limited.json<ErrorBody>().error.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // another key has its own budget; public routes have none
    expect((await keyed.app.inject({ method: 'GET', url: '/voices?language=de', headers: auth('env-key-1') })).statusCode).toBe(200);
    for (let i = 0; i < 5; i += 1) expect((await keyed.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it('answers CORS preflights for configured origins only', async () => {
    const preflight = (origin: string) =>
      keyed.app.inject({
        method: 'OPTIONS',
        url: '/tts',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
      });
    const allowed = await preflight('https://app.example');
    expect(allowed.statusCode).toBeLessThan(300);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example');
    const other = await preflight('https://evil.example');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('an open service', () => {
  it('warns at start-up that anyone can use it when it listens beyond loopback; says it is personal on loopback', async () => {
    for (const [host, expected] of [
      ['0.0.0.0', /"level":40.*No API keys are configured/],
      ['127.0.0.1', /"level":30.*a personal service, so no rate limits/],
    ] as const) {
      const lines: string[] = [];
      const stream = new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      });
      const open = await buildTestApp({ HOST: host }, { engines: keyed.app.engines, logger: { level: 'info', stream } });
      try {
        expect(lines.join('')).toMatch(expected);
        expect((await open.app.inject({ method: 'GET', url: '/voices?language=fr' })).statusCode).toBe(200);
      } finally {
        await open.close();
      }
    }
  });
});

describe('refused API keys', () => {
  /** An app sharing the keyed app's engines, with a low limit on refused keys. */
  async function limitedApp(env: Record<string, string>): Promise<TestApp> {
    return buildTestApp({ API_KEYS: 'good-key', AUTH_FAILURE_LIMIT: '3', ...env }, { engines: keyed.app.engines });
  }
  const voices = (app: TestApp, key: string, forwardedFor?: string) =>
    app.app.inject({
      method: 'GET',
      url: '/voices?language=fr',
      headers: { ...auth(key), ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) },
    });

  it('refuse an address after AUTH_FAILURE_LIMIT of them in a window, before its key is even compared', async () => {
    const app = await limitedApp({ TRUST_PROXY: '127.0.0.1' });
    try {
      for (let i = 0; i < 3; i += 1) expect((await voices(app, `guess-${i}`, '203.0.113.7')).statusCode).toBe(401);
      const limited = await voices(app, 'good-key', '203.0.113.7');
      expect(limited.statusCode).toBe(429);
      expect(limited.json<ErrorBody>().error.code).toBe('RATE_LIMITED');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      const openAi = await app.app.inject({ method: 'GET', url: '/v1/models', headers: { ...auth('good-key'), 'x-forwarded-for': '203.0.113.7' } });
      expect(openAi.statusCode).toBe(429);
      expect(openAi.json<OpenAiErrorBody>().error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
      // Another client behind the same trusted proxy keeps its access; public routes stay public.
      expect((await voices(app, 'good-key', '203.0.113.8')).statusCode).toBe(200);
      expect((await app.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-forwarded-for': '203.0.113.7' } })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('count per connecting address unless TRUST_PROXY says to believe X-Forwarded-For', async () => {
    const app = await limitedApp({});
    try {
      for (let i = 0; i < 3; i += 1) expect((await voices(app, 'wrong', `198.51.100.${i}`)).statusCode).toBe(401);
      expect((await voices(app, 'good-key', '198.51.100.99')).statusCode).toBe(429);
    } finally {
      await app.close();
    }
  });

  it('with a hop count, take the address the nearest proxy saw', async () => {
    const app = await limitedApp({ TRUST_PROXY: '1' });
    try {
      for (let i = 0; i < 3; i += 1) expect((await voices(app, 'wrong', `10.9.9.${i}, 192.0.2.1`)).statusCode).toBe(401);
      expect((await voices(app, 'good-key', '192.0.2.1')).statusCode).toBe(429);
      expect((await voices(app, 'good-key', '192.0.2.2')).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('forget an address once its window has ended', () => {
    let now = 0;
    const failed = new FailedKeys(2, 60_000, () => now);
    failed.refused('a');
    failed.refused('a');
    expect(failed.retryAfter('a')).toBe(60);
    expect(failed.retryAfter('b')).toBeUndefined();
    now = 30_500;
    expect(failed.retryAfter('a')).toBe(30);
    now = 60_000;
    expect(failed.retryAfter('a')).toBeUndefined();
    failed.refused('a');
    expect(failed.retryAfter('a')).toBeUndefined();
  });
});

describe('TRUST_PROXY', () => {
  it.each([
    [undefined, false],
    ['false', false],
    ['true', true],
    ['2', 2],
    ['10.0.0.0/8, 127.0.0.1, ::1, fd00::/8, loopback', ['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8', 'loopback']],
  ])('%s → %j', (value, expected) => {
    expect(loadConfig(value === undefined ? {} : { TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each(['proxy.example', '10.0.0.0/33', '300.1.1.1', '10.0.0.1/8/8', 'yes'])('stops on TRUST_PROXY=%s', (value) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/\bTRUST_PROXY=/);
  });
});
