import { readFile, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { AppError } from '../../src/errors.js';
import type { AssetResponse } from '../../src/api/assets.js';
import type { ErrorBody } from '../../src/api/errors.js';
import { multipartForm, useTestApp } from '../helpers/helpers.js';
import { runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const MAX_BYTES = 1024 * 1024;
const MAX_SECONDS = 10;
const t = useTestApp({ ASSET_MAX_BYTES: String(MAX_BYTES), ASSET_MAX_AUDIO_SECONDS: String(MAX_SECONDS), ASSET_RETENTION_HOURS: '2' });
const dir = useTempDir('voxreel-assets-');
const file = (name: string) => path.join(dir, name);

function upload(content: Buffer | string, filename = 'upload.bin', type = 'application/octet-stream') {
  return t.app.inject({ method: 'POST', url: '/assets', ...multipartForm([{ name: 'file', filename, type, content }]) });
}

/** Everything under the asset folder, temporary files included. */
async function assetFiles(): Promise<string[]> {
  return (await t.listFiles()).filter((name) => name.startsWith(`.assets${path.sep}`));
}

/** POSTs `body` to /assets chunked (no Content-Length); settles when the connection is gone, with the answer's status and Connection. */
function postStreamed(port: number, boundary: string, body: Readable): Promise<{ status: number; connection: unknown }> {
  return new Promise((resolve) => {
    let answered = { status: 0, connection: undefined as unknown };
    const request = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/assets', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
    request.on('response', (response) => {
      response.resume();
      answered = { status: response.statusCode ?? 0, connection: response.headers.connection };
    });
    request.on('error', () => undefined); // EPIPE or ECONNRESET: the server stopped reading, as it should
    request.on('close', () => resolve(answered));
    body.pipe(request);
  });
}

/** A PNG chunk with its CRC (PNG §5.3). */
function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A 60-byte PNG whose valid IHDR declares width × height (8-bit RGBA): what a decompression bomb starts with. */
function pngDeclaring(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = 6;
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', header), pngChunk('IDAT', Buffer.from([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])), pngChunk('IEND', Buffer.alloc(0))]);
}

const IMAGES = [
  { name: 'picture.png', format: 'png' },
  { name: 'picture.jpg', format: 'jpeg' },
  { name: 'picture.webp', format: 'webp' },
] as const;
const SOUNDS = [
  { name: 'music.wav', format: 'wav' },
  { name: 'music.mp3', format: 'mp3' },
  { name: 'music.ogg', format: 'ogg', codec: ['-c:a', 'libvorbis'] },
  { name: 'music.opus', format: 'ogg', codec: ['-c:a', 'libopus', '-f', 'ogg'] },
  { name: 'music.m4a', format: 'm4a', codec: ['-c:a', 'aac'] },
  { name: 'music.flac', format: 'flac' },
] as const;

beforeAll(async () => {
  for (const { name } of IMAGES) {
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240', '-frames:v', '1', file(name)]);
  }
  for (const sound of SOUNDS) {
    const codec = 'codec' in sound ? sound.codec : [];
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2', ...codec, file(sound.name)]);
  }
  await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', `sine=duration=${MAX_SECONDS + 2}`, '-ar', '8000', file('long.mp3')]);
  await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x120:duration=0.2', '-f', 'lavfi', '-i', 'sine=duration=0.2', '-c:v', 'mpeg4', '-c:a', 'aac', file('movie.mp4')]);
});

afterEach(() => {
  vi.useRealTimers();
});

describe('POST /assets', () => {
  it.each([...IMAGES, ...SOUNDS])('stores $name as $format, then answers its metadata and deletes it', async ({ name, format }) => {
    const content = await readFile(file(name));
    // The name and the declared type are ignored: the content decides.
    const response = await upload(content, 'whatever.txt', 'text/plain');
    expect(response.statusCode, response.body).toBe(201);
    const asset = response.json<AssetResponse>();
    expect(asset).toMatchObject({ status: 'success', format, bytes: content.length });
    expect(asset.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    if (asset.kind === 'image') {
      expect(asset).toMatchObject({ width: 320, height: 240 });
      expect(asset.duration).toBeUndefined();
    } else {
      expect(asset.duration).toBeCloseTo(2, 1);
      expect(asset.width).toBeUndefined();
      // ffmpeg's sine is 1/8 of full scale: a full-scale sine is -3 LUFS, this one 18 dB under it.
      expect(Math.abs((asset.loudness ?? 0) + 21.1), `loudness ${asset.loudness}`).toBeLessThan(1.5);
    }
    expect(Date.parse(asset.expires_at ?? '') - Date.parse(asset.created_at)).toBe(2 * 3_600_000);

    const stored = (await assetFiles()).filter((entry) => path.basename(entry).startsWith(asset.id));
    expect(stored).toHaveLength(2);
    const data = stored.find((entry) => !entry.endsWith('.json')) ?? '';
    expect((await readFile(path.join(t.outputDir, data))).equals(content)).toBe(true);
    // Never served, by its name or any other way.
    for (const url of [`/files/${data}`, `/files/.assets/${asset.id}.json`, `/files/%2eassets/${path.basename(data)}`]) {
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }

    const read = await t.app.inject({ method: 'GET', url: `/assets/${asset.id}` });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(asset);

    const deleted = await t.app.inject({ method: 'DELETE', url: `/assets/${asset.id}` });
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    const gone = await t.app.inject({ method: 'GET', url: `/assets/${asset.id}` });
    expect(gone.statusCode).toBe(404);
    expect(gone.json<ErrorBody>().error.code).toBe('ASSET_NOT_FOUND');
    expect((await t.app.inject({ method: 'DELETE', url: `/assets/${asset.id}` })).statusCode).toBe(404);
    expect((await assetFiles()).filter((entry) => entry.includes(asset.id))).toEqual([]);
  });

  type Body = () => Promise<{ payload: Buffer | string; headers: Record<string, string> }>;
  type Content = Buffer | string | (() => Promise<Buffer>);
  const fileOf = (content: Content, filename = 'upload.png', type?: string): Body => async () =>
    multipartForm([{ name: 'file', filename, type, content: typeof content === 'function' ? await content() : content }]);
  /** A generated file, or its first `end` bytes. */
  const read = (name: string, end?: number) => async () => (await readFile(file(name))).subarray(0, end);
  const png = read('picture.png');
  const refusals: Array<[string, number, string, Body]> = [
    ['a truncated PNG', 422, 'INVALID_ASSET', fileOf(read('picture.png', 1500))],
    ['a truncated JPEG', 422, 'INVALID_ASSET', fileOf(read('picture.jpg', 5000))],
    ['a PNG declaring 20000×20000', 413, 'ASSET_TOO_LARGE', fileOf(pngDeclaring(20_000, 20_000))],
    ['a PNG declaring 100 megapixels', 413, 'ASSET_TOO_LARGE', fileOf(pngDeclaring(10_000, 10_000))],
    ['an SVG named .png', 415, 'UNSUPPORTED_ASSET', fileOf('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', 'x.png', 'image/png')],
    ['an HTML file named .png', 415, 'UNSUPPORTED_ASSET', fileOf('<!doctype html><script>alert(1)</script>', 'x.png', 'image/png')],
    ['a two-byte file', 415, 'UNSUPPORTED_ASSET', fileOf('hi', 'x.mp3', 'audio/mpeg')],
    ['a video coded as MPEG-4 Part 2 (clips are H.264, VP9 or AV1)', 415, 'UNSUPPORTED_ASSET', fileOf(read('movie.mp4'), 'x.m4a')],
    ['an empty file', 422, 'INVALID_ASSET', fileOf('')],
    ['audio longer than the limit', 413, 'ASSET_TOO_LARGE', fileOf(read('long.mp3'), 'x.mp3')],
    ['a file over the byte limit', 413, 'ASSET_TOO_LARGE', fileOf(async () => Buffer.concat([await read('music.wav')(), Buffer.alloc(MAX_BYTES)]), 'x.wav')],
    ['no file field', 400, 'VALIDATION_ERROR', async () => multipartForm([])],
    ['a text field instead of the file', 400, 'VALIDATION_ERROR', async () => multipartForm([{ name: 'file', content: 'not a file' }])],
    ['the file under another name', 400, 'VALIDATION_ERROR', async () => multipartForm([{ name: 'image', filename: 'a.png', content: await png() }])],
    [
      'two files',
      400,
      'VALIDATION_ERROR',
      async () =>
        multipartForm([
          { name: 'file', filename: 'a.png', content: await png() },
          { name: 'file', filename: 'b.png', content: await png() },
        ]),
    ],
    ['a JSON body', 415, 'UNSUPPORTED_MEDIA_TYPE', async () => ({ payload: '{"file":"x"}', headers: { 'content-type': 'application/json' } })],
    ['a raw PNG body', 415, 'UNSUPPORTED_MEDIA_TYPE', async () => ({ payload: await png(), headers: { 'content-type': 'image/png' } })],
    ['a multipart body without its boundary', 400, 'BAD_REQUEST', async () => ({ payload: 'x', headers: { 'content-type': 'multipart/form-data; charset=utf-8' } })],
  ];

  it.each(refusals)('refuses %s with %i %s and leaves nothing behind', async (_name, status, code, body) => {
    const before = await assetFiles();
    const response = await t.app.inject({ method: 'POST', url: '/assets', ...(await body()) });
    expect(response.statusCode, response.body).toBe(status);
    const error = response.json<ErrorBody>().error;
    expect(error.code).toBe(code);
    expect(error.requestId).toBe(response.headers['x-request-id']);
    expect(await assetFiles()).toEqual(before);
  });

  it('refuses a file over the byte limit sent without a length, as it passes the limit', async () => {
    const before = await assetFiles();
    const { payload, headers } = multipartForm([{ name: 'file', filename: 'x.wav', content: Buffer.concat([await readFile(file('music.wav')), Buffer.alloc(3 * MAX_BYTES)]) }]);
    const response = await t.app.inject({ method: 'POST', url: '/assets', headers, payload: Readable.from([payload.subarray(0, 1000), payload.subarray(1000)]) });
    expect(response.statusCode).toBe(413);
    expect(response.json<ErrorBody>().error).toMatchObject({ code: 'ASSET_TOO_LARGE', field: 'file' });
    expect(await assetFiles()).toEqual(before);
  });

  it('stops reading an oversized upload at the limit and closes the connection', async () => {
    const before = await assetFiles();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const boundary = 'voxreel-cut';
    const total = 64 * MAX_BYTES;
    let pulled = 0;
    const chunk = Buffer.alloc(64 * 1024);
    const body = Readable.from(
      (function* () {
        yield Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="x.wav"\r\n\r\nRIFF\0\0\0\0WAVEfmt `);
        while (pulled < total) {
          pulled += chunk.length;
          yield chunk;
        }
      })(),
    );
    // Settled when the connection is gone: a server that went on reading would have taken all of it by then.
    const answer = await postStreamed(port, boundary, body);
    expect(answer).toEqual({ status: 413, connection: 'close' });
    // The server answered at the limit; what it did not read is what the client could not send.
    expect(pulled).toBeLessThan(total / 2);
    expect(await assetFiles()).toEqual(before);
  });

  it('cuts a chunked upload whose bytes outside the file part pass the limit (a preamble), 413, reading no more', async () => {
    const before = await assetFiles();
    if (!t.app.server.listening) await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const boundary = 'voxreel-preamble';
    const total = 64 * MAX_BYTES;
    let pulled = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const body = Readable.from(
      (function* () {
        // RFC 2046 lets a body start with a preamble the parser skips: here, far more of it than any upload may be.
        while (pulled < total) {
          pulled += chunk.length;
          yield chunk;
        }
        yield Buffer.from(`\r\n--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="x.png"\r\n\r\nnever reached\r\n--${boundary}--\r\n`);
      })(),
    );
    const answer = await postStreamed(port, boundary, body);
    expect(answer).toEqual({ status: 413, connection: 'close' });
    expect(pulled).toBeLessThan(total / 2);
    expect(await assetFiles()).toEqual(before);
  });

  it('leaves the other routes to JSON bodies', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/tts', ...multipartForm([{ name: 'text', content: 'Hello.' }]) });
    expect(response.statusCode).toBe(415);
    expect(response.json<ErrorBody>().error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 404 for ids that are malformed or unknown', async () => {
    for (const id of ['abc', 'A'.repeat(22), '..%2F..%2Fetc%2Fpasswd', `${'A'.repeat(21)}%2E`, 'A'.repeat(23)]) {
      for (const method of ['GET', 'DELETE'] as const) {
        const response = await t.app.inject({ method, url: `/assets/${id}` });
        expect(response.statusCode, `${method} ${id}`).toBe(404);
        expect(response.json<ErrorBody>().error.code).toBe('ASSET_NOT_FOUND');
      }
    }
  });
});

describe('app.assets', () => {
  /** Who injected requests are without a key: their address. */
  const OWNER = 'ip:127.0.0.1';
  async function stored(name: string): Promise<AssetResponse> {
    const response = await upload(await readFile(file(name)));
    expect(response.statusCode, response.body).toBe(201);
    return response.json<AssetResponse>();
  }

  it('resolves an asset of the kind asked for to its file', async () => {
    const image = await stored('picture.webp');
    const sound = await stored('music.ogg');
    const background = await t.app.assets.resolve(image.id, OWNER, 'image', 'background_image');
    expect(background).toMatchObject({ kind: 'image', format: 'webp', width: 320, height: 240 });
    expect((await readFile(background.path)).equals(await readFile(file('picture.webp')))).toBe(true);
    const music = await t.app.assets.resolve(sound.id, OWNER, 'audio', 'music');
    expect(music).toMatchObject({ kind: 'audio', format: 'ogg' });
    expect(music.duration).toBeCloseTo(2, 1);
  });

  it('refuses a wrong kind, an unknown id and a malformed one with UNKNOWN_ASSET naming the field', async () => {
    const image = await stored('picture.png');
    for (const [id, kind] of [
      [image.id, 'audio'],
      ['B'.repeat(22), 'image'],
      ['../../etc/passwd', 'image'],
    ] as const) {
      const error = await t.app.assets.resolve(id, OWNER, kind, 'music').then(
        () => undefined,
        (thrown: AppError) => thrown,
      );
      expect(error).toMatchObject({ code: 'UNKNOWN_ASSET', statusCode: 422, field: 'music' });
    }
  });

  it('expires assets after ASSET_RETENTION_HOURS and sweeps their files after the grace', async () => {
    const image = await stored('picture.jpg');
    const start = Date.now();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(start + 2 * 3_600_000 + 1000);
    expect((await t.app.inject({ method: 'GET', url: `/assets/${image.id}` })).statusCode).toBe(404);
    await expect(t.app.assets.resolve(image.id, OWNER, 'image', 'background_image')).rejects.toMatchObject({ code: 'UNKNOWN_ASSET' });
    // A render that resolved it just before still has its file.
    expect(await t.app.assets.sweep()).toBe(0);
    expect((await assetFiles()).some((name) => name.includes(image.id))).toBe(true);

    vi.setSystemTime(start + 2 * 3_600_000 + t.config.videoTimeoutMs + 1000);
    expect(await t.app.assets.sweep()).toBeGreaterThanOrEqual(1);
    expect((await assetFiles()).some((name) => name.includes(image.id))).toBe(false);
  });

  it('sweeps files left without their record', async () => {
    const orphan = path.join(t.config.assets.dir, `${'C'.repeat(22)}.png`);
    await writeFile(orphan, 'left by a crash');
    const start = Date.now();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(start + 3 * 3_600_000 + t.config.videoTimeoutMs);
    await t.app.assets.sweep();
    expect((await assetFiles()).some((name) => name.includes('C'.repeat(22)))).toBe(false);
  });
});

describe('asset configuration', () => {
  it('keeps assets as long as generated files, or a day when those are kept forever', () => {
    const hours = (env: Record<string, string>) => loadConfig({ OUTPUT_DIR: '/srv/out', ...env }).assets.retentionMs / 3_600_000;
    expect(hours({})).toBe(24);
    expect(hours({ RETENTION_HOURS: '6' })).toBe(6);
    expect(hours({ RETENTION_HOURS: '0' })).toBe(24);
    expect(hours({ RETENTION_HOURS: '6', ASSET_RETENTION_HOURS: '0' })).toBe(0);
    expect(loadConfig({ OUTPUT_DIR: '/srv/out' }).assets).toMatchObject({ dir: '/srv/out/.assets', maxBytes: 20 * 1024 * 1024, maxPixels: 40_000_000, maxAudioSeconds: 600, maxVideoSeconds: 60, maxVideoPixels: 3840 * 2160 });
    expect(() => loadConfig({ ASSET_MAX_PIXELS: '0' })).toThrow(/ASSET_MAX_PIXELS=/);
  });
});

describe('access to /assets', () => {
  const keyed = useTestApp({ API_KEYS: 'asset-key' });

  it('needs an API key like every API route', async () => {
    const png = await readFile(file('picture.png'));
    const denied = await keyed.app.inject({ method: 'POST', url: '/assets', ...multipartForm([{ name: 'file', filename: 'a.png', content: png }]) });
    expect(denied.statusCode).toBe(401);
    expect((await keyed.app.inject({ method: 'GET', url: `/assets/${'A'.repeat(22)}` })).statusCode).toBe(401);
    const { payload, headers } = multipartForm([{ name: 'file', filename: 'a.png', content: png }]);
    const allowed = await keyed.app.inject({ method: 'POST', url: '/assets', payload, headers: { ...headers, authorization: 'Bearer asset-key' } });
    expect(allowed.statusCode, allowed.body).toBe(201);
  });
});

describe('an image of exactly ASSET_MAX_PIXELS', () => {
  const [width, height] = [333, 231];
  const limited = useTestApp({ ASSET_MAX_PIXELS: String(width * height) });

  it('is taken in every format, though decoders pad its rows (333 wide counts as 384 to ffmpeg); one row more is refused', async () => {
    for (const name of ['exact.png', 'exact.jpg', 'exact.webp']) {
      await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', `testsrc=size=${width}x${height}`, '-frames:v', '1', file(name)]);
      const form = multipartForm([{ name: 'file', filename: name, content: await readFile(file(name)) }]);
      const response = await limited.app.inject({ method: 'POST', url: '/assets', ...form });
      expect(response.statusCode, `${name}: ${response.body}`).toBe(201);
    }
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', `testsrc=size=${width}x${height + 1}`, '-frames:v', '1', file('over.png')]);
    const over = await limited.app.inject({ method: 'POST', url: '/assets', ...multipartForm([{ name: 'file', filename: 'over.png', content: await readFile(file('over.png')) }]) });
    expect(over.statusCode).toBe(413);
  });
});
