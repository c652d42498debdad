// Issue 36, finding 10: every refusal says what happened, in the documented body, and a client's error is logged
// at info (or warn for a 5xx that is the client's quota or the service's passing state), never at error.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../src/api/errors.js';
import { buildTestApp, multipartForm, type TestApp } from '../helpers/helpers.js';

const voice = 'espeak-ng:en-us';
const lines: Array<{ level: number; msg: string; code?: string }> = [];
let t: TestApp;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number]);
      done();
    },
  });
  // A quota of about 1 KB: any real picture passes it.
  t = await buildTestApp({ ASSET_QUOTA_MB: '0.001' }, { loggerInstance: pino({ level: 'info' }, sink) });
});
afterAll(async () => t?.close());

const error = (response: { json<T>(): T }) => response.json<ErrorBody>().error;
const post = (payload: string) => t.app.inject({ method: 'POST', url: '/tts', headers: { 'content-type': 'application/json' }, payload });

describe('messages that say what happened (issue 36, finding 10)', () => {
  it('a malformed job id is called malformed, not empty', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/jobs/abc' });
    expect(response.statusCode).toBe(400);
    expect(error(response)).toMatchObject({ code: 'VALIDATION_ERROR', field: 'id', message: expect.stringContaining('malformed') });
    expect(error(response).message).not.toMatch(/empty/);
  });

  it('a method a route does not take is 405 with Allow, in the documented body; an unknown path stays 404', async () => {
    const response = await t.app.inject({ method: 'PUT', url: '/tts' });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect(error(response)).toMatchObject({ code: 'METHOD_NOT_ALLOWED', message: expect.stringContaining('PUT') });
    expect((await t.app.inject({ method: 'DELETE', url: '/voices' })).statusCode).toBe(405);
    expect((await t.app.inject({ method: 'PUT', url: '/no-such-route' })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/files/audio/none.mp3' })).statusCode).toBe(404);
  });

  it('a body with a __proto__ key is refused for that key, not as invalid JSON; broken JSON says where', async () => {
    const poisoned = await post(`{"__proto__":{"admin":true},"text":"Hi.","voice":"${voice}"}`);
    expect(poisoned.statusCode).toBe(400);
    expect(error(poisoned)).toMatchObject({ code: 'INVALID_JSON', message: expect.stringContaining('__proto__') });
    expect(error(poisoned).message).not.toMatch(/not valid JSON/);
    const constructor = await post(`{"constructor":{"prototype":{"admin":true}},"text":"Hi.","voice":"${voice}"}`);
    expect(error(constructor).message).toContain('prototype');
    const broken = await post('{"text": "Hi.",');
    expect(error(broken)).toMatchObject({ code: 'INVALID_JSON', message: expect.stringContaining('not valid JSON') });
    const empty = await post('');
    expect(error(empty)).toMatchObject({ code: 'INVALID_JSON', message: expect.stringContaining('empty') });
  });

  it('an empty <speak> has no text to speak, not "only emoji"', async () => {
    for (const text of ['<speak></speak>', '<speak>  <break time="1s"/> </speak>']) {
      const response = await post(JSON.stringify({ text, voice, text_type: 'ssml' }));
      expect(response.statusCode).toBe(422);
      expect(error(response)).toMatchObject({ code: 'UNSUPPORTED_TEXT', message: expect.stringContaining('no text to speak') });
    }
    const emoji = await post(JSON.stringify({ text: '🎉🎉', voice }));
    expect(error(emoji).message).toContain('emoji');
  });

  it('logs client errors at info, a quota 507 at warn, none at error', async () => {
    lines.length = 0;
    await post(JSON.stringify({ text: '<speak></speak>', voice }));
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    const quota = await t.app.inject({ method: 'POST', url: '/assets', ...multipartForm([{ name: 'file', filename: 'a.png', content: Buffer.concat([png, Buffer.alloc(2000)]) }]) });
    expect(quota.statusCode).toBe(507);
    const logged = (code: string) => lines.find((line) => line.code === code);
    expect(logged('UNSUPPORTED_TEXT')?.level).toBe(30);
    expect(logged('ASSET_QUOTA_EXCEEDED')?.level).toBe(40);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});
