import { randomBytes } from 'node:crypto';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../src/api/errors.js';
import { postTts, useTestApp } from '../helpers/helpers.js';

const t = useTestApp();
let served: string;
const SECRET = 'root:x:0:0:secret-marker';
const SIZE = 50_000;
const content = randomBytes(SIZE);

beforeAll(async () => {
  served = new URL((await postTts(t.app, { text: 'Served.', voice: 'espeak-ng:en-us' })).url).pathname;
  const outside = path.join(path.dirname(t.outputDir), `voxreel-outside-${path.basename(t.outputDir)}`);
  await mkdir(outside, { recursive: true });
  await writeFile(path.join(outside, 'passwd'), SECRET);
  await symlink(path.join(outside, 'passwd'), path.join(t.outputDir, 'audio', 'escape.mp3'));
  await symlink(outside, path.join(t.outputDir, 'video', 'dir'));
  await writeFile(path.join(t.outputDir, '.tmp', 'pending.mp3'), SECRET);
  await writeFile(path.join(t.outputDir, 'audio', 'big.mp3'), content);
  // Inside OUTPUT_DIR, but not published: temporary files, the root, a folder.
  await writeFile(path.join(t.outputDir, 'root-secret.mp3'), SECRET);
  await symlink(path.join(t.outputDir, '.tmp', 'pending.mp3'), path.join(t.outputDir, 'audio', 'to-tmp.mp3'));
  await symlink(path.join(t.outputDir, 'root-secret.mp3'), path.join(t.outputDir, 'audio', 'to-root.mp3'));
  await symlink('../.tmp/pending.mp3', path.join(t.outputDir, 'captions', 'relative.vtt'));
  await symlink(path.join(t.outputDir, 'video'), path.join(t.outputDir, 'audio', 'folder.mp3'));
  await mkdir(path.join(t.outputDir, 'audio', 'dir.mp3'));
  // A link from one published folder into another is still a published file.
  await symlink(path.join(t.outputDir, 'audio', 'big.mp3'), path.join(t.outputDir, 'video', 'same.mp4'));
});

const get = (url: string, range?: string) => t.app.inject({ method: 'GET', url, headers: range === undefined ? {} : { range } });

describe('GET /files/*', () => {
  it('serves a published file', async () => {
    const response = await t.app.inject({ method: 'GET', url: served });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('audio/mpeg');
  });

  it('answers a range outside the file with 416 in the documented body, naming the size in Content-Range', async () => {
    const response = await get('/files/audio/big.mp3', 'bytes=99999999-');
    expect(response.statusCode).toBe(416);
    expect(response.json<ErrorBody>().error.code).toBe('RANGE_NOT_SATISFIABLE');
    expect(response.headers['content-range']).toBe(`bytes */${SIZE}`);
  });

  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=49900-', 49_900, SIZE - 1],
    ['bytes=49900-99999999', 49_900, SIZE - 1],
    ['bytes=-100', SIZE - 100, SIZE - 1],
    ['bytes=-50000', 0, SIZE - 1],
    // RFC 9110 §14.1.2: a suffix longer than the file means all of it.
    ['bytes=-100000', 0, SIZE - 1],
    ['bytes=-99999999999999999999', 0, SIZE - 1],
  ])('answers %s with 206 and bytes %i-%i', async (range, first, last) => {
    const response = await get('/files/audio/big.mp3', range);
    expect(response.statusCode, response.body.slice(0, 200)).toBe(206);
    expect(response.headers['content-range']).toBe(`bytes ${first}-${last}/${SIZE}`);
    expect(response.rawPayload.equals(content.subarray(first, last + 1))).toBe(true);
  });

  it('serves a link from one published folder to a file in another', async () => {
    const response = await get('/files/video/same.mp4');
    expect(response.statusCode).toBe(200);
    expect(response.rawPayload.equals(content)).toBe(true);
  });

  it.each([
    '/files/audio/escape.mp3',
    '/files/audio/to-tmp.mp3',
    '/files/audio/to-root.mp3',
    '/files/captions/relative.vtt',
    '/files/audio/folder.mp3',
    '/files/audio/dir.mp3',
    '/files/root-secret.mp3',
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
