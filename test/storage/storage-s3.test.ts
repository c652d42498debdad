import { once } from 'node:events';
import { readdir, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import path from 'node:path';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it, vi } from 'vitest';
import { AppError } from '../../src/errors.js';
import type { TtsResponse } from '../../src/api/speech.js';
import { S3Storage, type S3StorageOptions } from '../../src/storage/s3.js';
import { publishFiles, type Companion, type Storage } from '../../src/storage/storage.js';
import { buildTestApp } from '../helpers/helpers.js';
import { probe } from '../helpers/media.js';
import { useS3 } from '../helpers/s3-server.js';
import { useTempDir } from '../helpers/temp-dir.js';

const s3 = useS3();
const tempRoot = useTempDir('voxreel-s3-temp-');
const PREFIX = 'voxreel/';
const DAY_MS = 24 * 3_600_000;

let storages = 0;
/** An S3Storage on the test server, public URLs by default, with a temporary folder of its own. */
function s3Storage(options: Partial<S3StorageOptions> = {}): S3Storage {
  storages += 1;
  return new S3Storage({
    kind: 's3',
    bucket: s3.bucket,
    prefix: PREFIX,
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    presignSeconds: 0,
    publicUrl: s3.bucketUrl,
    tempDir: path.join(tempRoot, String(storages)),
    ...options,
  });
}

/** Every key in the bucket under `prefix`. */
async function keysUnder(storage: S3Storage, prefix: string): Promise<string[]> {
  const listed = await storage.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
  return (listed.Contents ?? []).map(({ Key }) => Key ?? '').sort();
}

async function tempFiles(storage: S3Storage): Promise<string[]> {
  return readdir(storage.options.tempDir).catch(() => []);
}

const captions: Array<Companion<string>> = [
  { kind: 'captions', extension: 'vtt', content: (words) => `WEBVTT\n\n00:00.000 --> 00:01.000\n${words}\n` },
  { kind: 'captions', extension: 'srt', content: (words) => `1\n00:00:00,000 --> 00:00:01,000\n${words}\n` },
];
const AUDIO = Buffer.from('ID3-not-really-mp3 \u0000\u0001\u0002 bytes');

/** Publishes AUDIO as an mp3, with both caption files. */
function publishAudio(storage: Storage, name?: string) {
  return publishFiles(
    storage,
    { kind: 'audio', extension: 'mp3' },
    async (file) => {
      await writeFile(file, AUDIO);
      return 'Hello there';
    },
    captions,
    { name },
  );
}

/** A proxy to `target` that answers the next `failures` PUTs 503 SlowDown, as S3 does when throttling. */
async function flakyProxy(target: string, failures: number) {
  let left = failures;
  let refused = 0;
  let down = false;
  const server: Server = createServer((incoming, outgoing) => {
    if (down || (incoming.method === 'PUT' && left > 0)) {
      left -= 1;
      refused += 1;
      incoming.resume();
      outgoing.writeHead(503, { 'content-type': 'application/xml' });
      outgoing.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>');
      return;
    }
    const forwarded = request(new URL(incoming.url ?? '/', target), { method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    incoming.pipe(forwarded);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    refuse: (count: number) => {
      left = count;
    },
    /** Every request answered 503 (an outage), or forwarded again. */
    down: (isDown: boolean) => {
      down = isDown;
    },
    refusedPuts: () => refused,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

describe('S3Storage', () => {
  it('publishes a file and its companions whole, with their content types, at public URLs', async () => {
    const storage = s3Storage();
    const { file, companions } = await publishAudio(storage);
    const name = path.basename(file.key, '.mp3');
    expect(name).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(file).toEqual({ key: `audio/${name}.mp3`, url: `${s3.bucketUrl}/${PREFIX}audio/${name}.mp3`, bytes: AUDIO.length });
    expect(companions.map(({ key }) => key)).toEqual([`captions/${name}.vtt`, `captions/${name}.srt`]);
    expect(await keysUnder(storage, PREFIX)).toEqual(expect.arrayContaining([`${PREFIX}audio/${name}.mp3`, `${PREFIX}captions/${name}.vtt`, `${PREFIX}captions/${name}.srt`]));

    const audio = await fetch(file.url);
    expect(audio.status).toBe(200);
    expect(Buffer.from(await audio.arrayBuffer())).toEqual(AUDIO);
    expect(audio.headers.get('content-type')).toBe('audio/mpeg');
    expect(audio.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const [vtt, srt] = await Promise.all(companions.map(({ url }) => fetch(url)));
    expect(vtt?.headers.get('content-type')).toMatch(/^text\/vtt/);
    expect(await vtt?.text()).toContain('Hello there');
    expect(srt?.headers.get('content-type')).toMatch(/^application\/x-subrip/);
    expect(await srt?.text()).toMatch(/^1\n00:00:00,000 --> /);
    expect(await tempFiles(storage)).toEqual([]);
  });

  it('presigns URLs for a private bucket, valid for S3_PRESIGN_SECONDS', async () => {
    const storage = s3Storage({ presignSeconds: 60 });
    const { file } = await publishAudio(storage);
    const url = new URL(file.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${s3.bucketUrl}/${PREFIX}${file.key}`);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('60');
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^S3RVER\//);
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer())).toEqual(AUDIO);
    expect(response.headers.get('cache-control')).toBe('private, max-age=60');

    // A URL signed two hours ago has expired (s3rver checks expiry; it does not verify V4 signatures).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 2 * 3_600_000 });
    const stale = await storage.urlOf(file.key).finally(() => vi.useRealTimers());
    expect((await fetch(stale)).status).toBe(403);
  });

  it('publishes under a given name, a second run replacing the first', async () => {
    const storage = s3Storage();
    const first = await publishAudio(storage, 'job-42');
    expect(first.file.key).toBe('audio/job-42.mp3');
    const again = await publishFiles(storage, { kind: 'audio', extension: 'mp3' }, (file) => writeFile(file, 'second run'), [], { name: 'job-42' });
    expect(await (await fetch(again.file.url)).text()).toBe('second run');
    await expect(publishAudio(storage, '../escape')).rejects.toThrow(/Not a file name/);
  });

  it('leaves no object and no temporary file when producing fails', async () => {
    const storage = s3Storage();
    const failure = new Error('the encoder crashed');
    const name = storage.newName();
    const publishing = publishFiles(
      storage,
      { kind: 'audio', extension: 'mp3' },
      async (file) => {
        await writeFile(file, 'half an mp3');
        throw failure;
      },
      captions,
      { name },
    );
    await expect(publishing).rejects.toBe(failure);
    expect((await keysUnder(storage, PREFIX)).filter((key) => key.includes(name))).toEqual([]);
    expect(await tempFiles(storage)).toEqual([]);
  });

  it('takes back the companions already uploaded when a later upload fails', async () => {
    const storage = s3Storage();
    // The SRT's upload is refused after the VTT's went through.
    const refusing: Storage = Object.create(storage, {
      pending: {
        value: async (...args: Parameters<Storage['pending']>) => {
          const file = await storage.pending(...args);
          const commit = async () => {
            await file.discard();
            throw new Error('upload refused');
          };
          return args[2] === 'srt' ? { ...file, commit } : file;
        },
      },
    }) as Storage;
    const name = storage.newName();
    const publishing = publishAudio(refusing, name);
    await expect(publishing).rejects.toBeInstanceOf(AppError);
    await expect(publishing).rejects.toMatchObject({ code: 'STORAGE_FAILED' });
    expect((await keysUnder(storage, PREFIX)).filter((key) => key.includes(name))).toEqual([]);
    expect(await tempFiles(storage)).toEqual([]);
  });

  it('knows whether a file exists, and deletes it', async () => {
    const storage = s3Storage();
    const { file } = await publishAudio(storage);
    expect(await storage.exists(file.key)).toBe(true);
    expect(await storage.exists('audio/never-published.mp3')).toBe(false);
    await storage.delete(file.key);
    expect(await storage.exists(file.key)).toBe(false);
    expect((await fetch(file.url)).status).toBe(404);
    await expect(storage.delete(file.key)).resolves.toBeUndefined();
  });

  it('sweeps old objects of its own folders only', async () => {
    const storage = s3Storage({ prefix: 'sweep/' });
    const old = await publishAudio(storage);
    const fresh = await publishAudio(storage);
    const twoDaysAgo = new Date(Date.now() - 2 * DAY_MS);
    for (const { key } of [old.file, ...old.companions]) await s3.backdate(`sweep/${key}`, twoDaysAgo);
    // Old, but not ours: outside the prefix, and inside it but outside the kinds' folders.
    for (const key of ['elsewhere/audio/x.mp3', 'sweep/notes/x.txt']) {
      await storage.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: 'x' }));
      await s3.backdate(key, twoDaysAgo);
    }

    expect(await storage.sweep(DAY_MS)).toBe(3);
    expect(await storage.exists(old.file.key)).toBe(false);
    expect(await storage.exists(fresh.file.key)).toBe(true);
    expect(await keysUnder(storage, 'elsewhere/')).toEqual(['elsewhere/audio/x.mp3']);
    expect(await keysUnder(storage, 'sweep/notes/')).toEqual(['sweep/notes/x.txt']);
    expect(await storage.sweep(0)).toBe(3);
    expect(await keysUnder(storage, 'sweep/audio/')).toEqual([]);
  });

  it('sends an upload again while the server fails it; past its patience, STORAGE_UNAVAILABLE and nothing left; known down until it answers', async () => {
    const proxy = await flakyProxy(s3.endpoint, 1);
    try {
      const storage = s3Storage({ endpoint: proxy.endpoint, publicUrl: `${proxy.endpoint}/${s3.bucket}`, patienceMs: 1500 });
      const { file } = await publishFiles(storage, { kind: 'audio', extension: 'mp3' }, (output) => writeFile(output, AUDIO));
      expect(proxy.refusedPuts()).toBe(1);
      expect(Buffer.from(await (await fetch(file.url)).arrayBuffer())).toEqual(AUDIO);
      expect(storage.unavailable).toBe(false);

      proxy.refuse(Infinity);
      const name = storage.newName();
      const publishing = publishFiles(storage, { kind: 'audio', extension: 'mp3' }, (output) => writeFile(output, AUDIO), [], { name });
      await expect(publishing).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE', statusCode: 503, retryAfter: 10 });
      expect(proxy.refusedPuts()).toBeGreaterThan(1 + 3);
      expect(storage.unavailable).toBe(true);
      expect(await storage.exists(`audio/${name}.mp3`)).toBe(false);
      expect(await tempFiles(storage)).toEqual([]);

      // A deadline ends the wait sooner, as the job's own.
      const started = Date.now();
      const cut = publishFiles(storage, { kind: 'audio', extension: 'mp3' }, (output) => writeFile(output, AUDIO), [], { signal: AbortSignal.timeout(300) });
      await expect(cut).rejects.toBeTruthy();
      expect(Date.now() - started).toBeLessThan(1200);
      proxy.refuse(0);
      expect(await storage.writable()).toBe(true);
      expect(storage.unavailable).toBe(false);
    } finally {
      await proxy.close();
    }
  });

  it('is writable while its bucket answers', async () => {
    expect(await s3Storage().writable()).toBe(true);
    expect(await s3Storage({ bucket: 'no-such-bucket' }).writable()).toBe(false);
  });
});

describe('the service on S3 storage', () => {
  it('answers /tts with a URL in the bucket where real audio is', async () => {
    const storage = s3Storage({ prefix: 'service/' });
    const t = await buildTestApp({}, { storage });
    try {
      const voices = await t.app.inject({ method: 'GET', url: '/voices' });
      const voice = 'espeak-ng:en-us';
      expect(voices.body).toContain(`"${voice}"`);
      const response = await t.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Stored in a bucket.', voice, format: 'mp3' } });
      expect(response.statusCode, response.body).toBe(200);
      const { url, bytes } = response.json<TtsResponse>();
      expect(url).toMatch(new RegExp(`^${s3.bucketUrl}/service/audio/[A-Za-z0-9_-]{22}\\.mp3$`));

      const fetched = await fetch(url);
      expect(fetched.status).toBe(200);
      expect(fetched.headers.get('content-type')).toBe('audio/mpeg');
      const body = Buffer.from(await fetched.arrayBuffer());
      expect(body.length).toBe(bytes);
      const local = path.join(tempRoot, 'fetched.mp3');
      await writeFile(local, body);
      const info = await probe(local);
      expect(info.streams.map((stream) => stream.codecType)).toEqual(['audio']);
      expect(info.duration).toBeGreaterThan(0.5);

      const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.json<{ checks: Record<string, boolean> }>().checks.outputWritable).toBe(true);
      expect(await t.listFiles()).toEqual([]); // nothing went to OUTPUT_DIR
    } finally {
      await t.close();
    }
  });

  it('rides out an S3 outage inside the job: the request waits, new ones are refused 503 STORAGE_UNAVAILABLE meanwhile, and it succeeds once S3 is back', async () => {
    const proxy = await flakyProxy(s3.endpoint, 0);
    const storage = s3Storage({ prefix: 'outage/', endpoint: proxy.endpoint, publicUrl: `${proxy.endpoint}/${s3.bucket}` });
    const t = await buildTestApp({ CACHE_MAX_ENTRIES: '0' }, { storage });
    try {
      proxy.down(true);
      const waiting = t.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Stored after the outage.', voice: 'espeak-ng:en-us' } });
      await expect.poll(() => storage.unavailable, { timeout: 10_000 }).toBe(true);
      const refused = await t.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Not now.', voice: 'espeak-ng:en-us' } });
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.json().error.code).toBe('STORAGE_UNAVAILABLE');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      proxy.down(false);
      const answer = await waiting;
      expect(answer.statusCode, answer.body).toBe(200);
      const fetched = await fetch(answer.json<TtsResponse>().url);
      expect(fetched.status).toBe(200);
      expect(storage.unavailable).toBe(false);
      // Intake is open again.
      expect((await t.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Now.', voice: 'espeak-ng:en-us' } })).statusCode).toBe(200);
    } finally {
      await t.close();
      await proxy.close();
    }
  }, 60_000);

  it('answers a cached request on a private bucket with freshly presigned URLs', async () => {
    const storage = s3Storage({ prefix: 'private/', presignSeconds: 600 });
    const t = await buildTestApp({}, { storage });
    try {
      const payload = { text: 'Signed again when cached.', voice: 'espeak-ng:en-us', timestamps: true };
      const first = (await t.app.inject({ method: 'POST', url: '/tts', payload })).json<TtsResponse & { cached: boolean }>();
      // Signatures carry the second they were made.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const again = (await t.app.inject({ method: 'POST', url: '/tts', payload })).json<TtsResponse & { cached: boolean }>();
      expect(again.cached).toBe(true);
      for (const field of ['url', 'captionsUrl', 'srtUrl'] as const) {
        const [before, after] = [new URL(first[field] ?? ''), new URL(again[field] ?? '')];
        expect(after.pathname).toBe(before.pathname);
        expect(after.searchParams.get('X-Amz-Date')).not.toBe(before.searchParams.get('X-Amz-Date'));
        expect((await fetch(after)).status).toBe(200);
      }
    } finally {
      await t.close();
    }
  });
});
