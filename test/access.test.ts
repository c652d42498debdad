import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/http/schemas.js';
import { buildTestApp, useTestApp } from './helpers.js';
import { useTempDir } from './temp-dir.js';

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
  it('warns at start-up that anyone can use it', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const open = await buildTestApp({}, { engines: keyed.app.engines, logger: { level: 'warn', stream } });
    try {
      expect(lines.join('')).toMatch(/No API keys are configured/);
      expect((await open.app.inject({ method: 'GET', url: '/voices?language=fr' })).statusCode).toBe(200);
    } finally {
      await open.close();
    }
  });
});
