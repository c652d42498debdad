import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/http/schemas.js';
import { postTts, useTestApp } from './helpers.js';

const t = useTestApp();
let served: string;
const SECRET = 'root:x:0:0:secret-marker';

beforeAll(async () => {
  served = new URL((await postTts(t.app, { text: 'Served.', voice: 'espeak-ng:en-us' })).url).pathname;
  const outside = path.join(path.dirname(t.outputDir), `voxreel-outside-${path.basename(t.outputDir)}`);
  await mkdir(outside, { recursive: true });
  await writeFile(path.join(outside, 'passwd'), SECRET);
  await symlink(path.join(outside, 'passwd'), path.join(t.outputDir, 'audio', 'escape.mp3'));
  await symlink(outside, path.join(t.outputDir, 'video', 'dir'));
  await writeFile(path.join(t.outputDir, '.tmp', 'pending.mp3'), SECRET);
});

describe('GET /files/*', () => {
  it('serves a published file', async () => {
    const response = await t.app.inject({ method: 'GET', url: served });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('audio/mpeg');
  });

  it('answers a range outside the file with 416 in the documented body', async () => {
    const response = await t.app.inject({ method: 'GET', url: served, headers: { range: 'bytes=99999999-' } });
    expect(response.statusCode).toBe(416);
    expect(response.json<ErrorBody>().error.code).toBe('RANGE_NOT_SATISFIABLE');
  });

  it.each([
    '/files/audio/escape.mp3',
    '/files/video/dir/passwd',
    '/files/.tmp/pending.mp3',
    '/files/%2etmp/pending.mp3',
    '/files/audio/..%2f.tmp%2fpending.mp3',
    '/files/audio/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
    '/files/..%2f..%2f..%2fetc%2fpasswd',
    '/files/audio/..\\..\\..\\etc\\passwd',
    '/files/audio/%5c..%5c..%5cetc%5cpasswd',
    '/files//etc/passwd',
    '/files/%2fetc%2fpasswd',
    '/files/audio/x.mp3%00.txt',
    '/files/audio/%00',
    '/files/',
    '/files/audio/',
  ])('refuses %s', async (url) => {
    const response = await t.app.inject({ method: 'GET', url });
    expect(response.statusCode, response.body.slice(0, 200)).toBeGreaterThanOrEqual(400);
    expect(response.statusCode).toBeLessThan(500);
    expect(response.body).not.toContain('secret-marker');
    expect(response.json<ErrorBody>().status).toBe('error');
  });
});
