import { describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../src/api/errors.js';
import { useTestApp } from '../helpers/helpers.js';

const t = useTestApp({ BODY_LIMIT_BYTES: '65536' });

interface Case {
  name: string;
  payload?: string;
  contentType?: string;
  method?: 'POST' | 'GET' | 'DELETE';
  url?: string;
  status: number;
  code: string;
  field?: string;
}

const json = (body: unknown) => JSON.stringify(body);
const voice = 'espeak-ng:en-us';

const cases: Case[] = [
  { name: 'missing text', payload: json({ voice }), status: 400, code: 'VALIDATION_ERROR', field: 'text' },
  { name: 'empty text', payload: json({ text: '', voice }), status: 400, code: 'VALIDATION_ERROR', field: 'text' },
  { name: 'blank text', payload: json({ text: ' \n\t ', voice }), status: 400, code: 'VALIDATION_ERROR', field: 'text' },
  { name: 'text not a string', payload: json({ text: 42, voice }), status: 400, code: 'VALIDATION_ERROR', field: 'text' },
  { name: 'text over 5000', payload: json({ text: 'a'.repeat(5001), voice }), status: 400, code: 'VALIDATION_ERROR', field: 'text' },
  { name: 'missing voice', payload: json({ text: 'Hi.' }), status: 400, code: 'VALIDATION_ERROR', field: 'voice' },
  { name: 'unknown voice', payload: json({ text: 'Hi.', voice: 'espeak-ng:klingon' }), status: 400, code: 'UNKNOWN_VOICE', field: 'voice' },
  { name: 'speed too low', payload: json({ text: 'Hi.', voice, speed: 0.49 }), status: 400, code: 'VALIDATION_ERROR', field: 'speed' },
  { name: 'speed too high', payload: json({ text: 'Hi.', voice, speed: 2.01 }), status: 400, code: 'VALIDATION_ERROR', field: 'speed' },
  { name: 'speed not a number', payload: json({ text: 'Hi.', voice, speed: 'fast' }), status: 400, code: 'VALIDATION_ERROR', field: 'speed' },
  { name: 'speed as a numeric string', payload: json({ text: 'Hi.', voice, speed: '1.5' }), status: 400, code: 'VALIDATION_ERROR', field: 'speed' },
  { name: 'unknown format', payload: json({ text: 'Hi.', voice, format: 'flac' }), status: 400, code: 'VALIDATION_ERROR', field: 'format' },
  { name: 'unknown field', payload: json({ text: 'Hi.', voice, pitch: 3 }), status: 400, code: 'VALIDATION_ERROR', field: 'pitch' },
  { name: 'body not an object', payload: json(['Hi.']), status: 400, code: 'VALIDATION_ERROR' },
  { name: 'malformed JSON', payload: '{"text": "Hi.", "voice":', status: 400, code: 'INVALID_JSON' },
  { name: 'empty body', payload: '', status: 400, code: 'INVALID_JSON' },
  { name: 'wrong content type', payload: 'text=Hi', contentType: 'application/x-www-form-urlencoded', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
  { name: 'plain text body', payload: 'Hi.', contentType: 'text/plain', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
  { name: 'body too large', payload: json({ text: 'a'.repeat(70_000), voice }), status: 413, code: 'PAYLOAD_TOO_LARGE' },
  { name: 'unknown route', method: 'GET', url: '/nope', status: 404, code: 'NOT_FOUND' },
  { name: 'unknown method on a route', method: 'DELETE', url: '/tts', status: 405, code: 'METHOD_NOT_ALLOWED' },
  { name: 'missing file', method: 'GET', url: '/files/audio/nothing.mp3', status: 404, code: 'NOT_FOUND' },
  { name: 'temporary files are not served', method: 'GET', url: '/files/.tmp/x.mp3', status: 404, code: 'NOT_FOUND' },
  { name: 'malformed URL', method: 'GET', url: '/files/audio/%c0%ae', status: 400, code: 'BAD_REQUEST' },
  { name: 'malformed URL on a route', method: 'POST', url: '/tts%zz', status: 400, code: 'BAD_REQUEST' },
];

describe('errors share one documented body', () => {
  for (const c of cases) {
    it(`${c.name} → ${c.status} ${c.code}`, async () => {
      const before = await t.listFiles();
      const response = await t.app.inject({
        method: c.method ?? 'POST',
        url: c.url ?? '/tts',
        payload: c.payload,
        headers: c.payload === undefined ? {} : { 'content-type': c.contentType ?? 'application/json' },
      });
      expect(response.statusCode, response.body).toBe(c.status);
      const body = response.json<ErrorBody>();
      expect(body.status).toBe('error');
      expect(body.error.code).toBe(c.code);
      expect(body.error.message.length).toBeGreaterThan(5);
      expect(body.error.requestId).toBe(response.headers['x-request-id']);
      if (c.field) expect(body.error.field).toBe(c.field);
      expect(await t.listFiles()).toEqual(before);
    });
  }

  it.each(['abc-123', 'trace:7f3a.b_c', 'x'.repeat(128)])('keeps a caller-supplied request id (%s)', async (id) => {
    const response = await t.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': id } });
    expect(response.json<ErrorBody>().error.requestId).toBe(id);
    expect(response.headers['x-request-id']).toBe(id);
  });

  it.each([
    ['too long', 'x'.repeat(129)],
    ['16 KB', 'a'.repeat(16_000)],
    ['with spaces', 'abc 123'],
    ['with markup', '<script>alert(1)</script>'],
    ['with a quote', 'abc"def'],
  ])('replaces a request id %s with a fresh one', async (_name, id) => {
    const response = await t.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': id } });
    const { requestId } = response.json<ErrorBody>().error;
    expect(requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(response.headers['x-request-id']).toBe(requestId);
  });
});
