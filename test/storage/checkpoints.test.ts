import { randomBytes } from 'node:crypto';
import { readdir, utimes } from 'node:fs/promises';
import path from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { assertCheckpointName } from '../../src/storage/checkpoints.js';
import { LocalStorage } from '../../src/storage/local.js';
import { S3Storage } from '../../src/storage/s3.js';
import type { Storage } from '../../src/storage/storage.js';
import { useS3 } from '../helpers/s3-server.js';
import { useTempDir } from '../helpers/temp-dir.js';

const s3 = useS3();
const tempRoot = useTempDir('voxreel-checkpoints-');
const DAY_MS = 24 * 3_600_000;

/** Every byte value once, in order. */
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, byte) => byte));
/** 1 MB of random bytes. */
const MEGABYTE = randomBytes(1 << 20);
const BAD_NAMES = ['../x', 'a/b', '', '.', '..', '.hidden', 'a\\b', 'x'.repeat(129)];

/** A job name of its own for each test (the S3 backends share one bucket). */
function newJob(): string {
  return `job-${randomBytes(6).toString('hex')}`;
}

let opened = 0;
async function localStorage(): Promise<LocalStorage> {
  opened += 1;
  const storage = new LocalStorage(path.join(tempRoot, `local-${opened}`), 'http://files.example');
  await storage.init();
  return storage;
}

function s3Storage(): S3Storage {
  opened += 1;
  return new S3Storage({
    kind: 's3',
    bucket: s3.bucket,
    prefix: `checkpoints-${opened}/`,
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    presignSeconds: 0,
    publicUrl: s3.bucketUrl,
    tempDir: path.join(tempRoot, `s3-temp-${opened}`),
  });
}

describe('assertCheckpointName', () => {
  it('takes plain names and refuses anything that could leave its folder', () => {
    for (const name of ['job-1', 'abc.000001', 'A_b-c.d', 'x'.repeat(128)]) expect(() => assertCheckpointName(name)).not.toThrow();
    for (const name of BAD_NAMES) expect(() => assertCheckpointName(name), JSON.stringify(name)).toThrow(Error);
  });
});

/** The contract every backend's checkpoint store keeps. */
function checkpointContract(backend: string, open: () => Promise<Storage>): void {
  describe(`${backend} checkpoints`, () => {
    it('lists nothing, and loads nothing, for an unknown job', async () => {
      const { checkpoints } = await open();
      expect(await checkpoints.list(newJob())).toEqual(new Set());
      expect(await checkpoints.load(newJob(), 'missing')).toBeUndefined();
      await expect(checkpoints.clear(newJob())).resolves.toBeUndefined();
    });

    it('loads the very bytes saved, every byte value and a megabyte', async () => {
      const { checkpoints } = await open();
      const job = newJob();
      await checkpoints.save(job, 'all-bytes', ALL_BYTES);
      await checkpoints.save(job, 'big.000001', MEGABYTE);
      await checkpoints.save(job, 'empty', Buffer.alloc(0));
      expect((await checkpoints.load(job, 'all-bytes'))?.equals(ALL_BYTES)).toBe(true);
      const big = await checkpoints.load(job, 'big.000001');
      expect(big?.length).toBe(MEGABYTE.length);
      expect(big?.equals(MEGABYTE)).toBe(true);
      expect(await checkpoints.load(job, 'empty')).toEqual(Buffer.alloc(0));
      expect(await checkpoints.load(job, 'missing')).toBeUndefined();
    });

    it('replaces a checkpoint saved again under its name', async () => {
      const { checkpoints } = await open();
      const job = newJob();
      await checkpoints.save(job, 'one', MEGABYTE);
      await checkpoints.save(job, 'one', ALL_BYTES);
      expect((await checkpoints.load(job, 'one'))?.equals(ALL_BYTES)).toBe(true);
      expect(await checkpoints.list(job)).toEqual(new Set(['one']));
    });

    it('lists exactly the names saved, each job its own; clear removes only that job\'s', async () => {
      const { checkpoints } = await open();
      const [first, second] = [newJob(), newJob()];
      const names = ['abc.000000', 'abc.000001', 'abc.000002'];
      for (const name of names) await checkpoints.save(first, name, Buffer.from(name));
      await checkpoints.save(second, 'abc.000000', Buffer.from('second'));
      await checkpoints.save(second, 'other', Buffer.from('other'));

      expect(await checkpoints.list(first)).toEqual(new Set(names));
      expect(await checkpoints.list(second)).toEqual(new Set(['abc.000000', 'other']));
      expect((await checkpoints.load(first, 'abc.000000'))?.toString()).toBe('abc.000000');
      expect((await checkpoints.load(second, 'abc.000000'))?.toString()).toBe('second');
      expect(await checkpoints.load(first, 'other')).toBeUndefined();

      await checkpoints.clear(first);
      expect(await checkpoints.list(first)).toEqual(new Set());
      expect(await checkpoints.load(first, 'abc.000001')).toBeUndefined();
      expect(await checkpoints.list(second)).toEqual(new Set(['abc.000000', 'other']));
      expect((await checkpoints.load(second, 'other'))?.toString()).toBe('other');
      await checkpoints.clear(first); // again: nothing there, nothing happens
    });

    it('refuses a job or a name that could leave its folder', async () => {
      const { checkpoints } = await open();
      const job = newJob();
      for (const bad of BAD_NAMES) {
        await expect(checkpoints.list(bad), JSON.stringify(bad)).rejects.toThrow(Error);
        await expect(checkpoints.clear(bad)).rejects.toThrow(Error);
        await expect(checkpoints.save(bad, 'x', ALL_BYTES)).rejects.toThrow(Error);
        await expect(checkpoints.save(job, bad, ALL_BYTES)).rejects.toThrow(Error);
        await expect(checkpoints.load(bad, 'x')).rejects.toThrow(Error);
        await expect(checkpoints.load(job, bad)).rejects.toThrow(Error);
      }
      expect(await checkpoints.list(job)).toEqual(new Set());
    });

    it('keeps fresh checkpoints through any sweep', async () => {
      const storage = await open();
      const job = newJob();
      await storage.checkpoints.save(job, 'fresh', ALL_BYTES);
      expect(await storage.sweep(0)).toBe(0);
      expect(await storage.checkpoints.list(job)).toEqual(new Set(['fresh']));
      expect((await storage.checkpoints.load(job, 'fresh'))?.equals(ALL_BYTES)).toBe(true);
    });
  });
}

checkpointContract('LocalStorage', localStorage);
checkpointContract('S3Storage', async () => s3Storage());

describe('LocalStorage checkpoints on disk', () => {
  it('lie under .checkpoints/<job>/<name>, never served, nothing left in .tmp', async () => {
    const storage = await localStorage();
    const job = newJob();
    await storage.checkpoints.save(job, 'one', ALL_BYTES);
    expect(await readdir(path.join(storage.root, '.checkpoints', job))).toEqual(['one']);
    expect(await readdir(path.join(storage.root, '.tmp'))).toEqual([]);
    expect(storage.isServable('.checkpoints/x/y')).toBe(false);
    expect(storage.isServable(`.checkpoints/${job}/one`)).toBe(false);
    expect(storage.isServable(`/.checkpoints/${job}/one`)).toBe(false);
    expect(await storage.exists(`.checkpoints/${job}/one`)).toBe(false);
  });

  it('survive a restart (init clears temporary files, not checkpoints)', async () => {
    const storage = await localStorage();
    const job = newJob();
    await storage.checkpoints.save(job, 'one', MEGABYTE);
    const restarted = new LocalStorage(storage.root, storage.baseUrl);
    await restarted.init(true);
    expect(await restarted.checkpoints.list(job)).toEqual(new Set(['one']));
    expect((await restarted.checkpoints.load(job, 'one'))?.equals(MEGABYTE)).toBe(true);
  });

  it('are swept with their job once its newest is stale, and counted', async () => {
    const storage = await localStorage();
    const [stale, mixed, recent] = [newJob(), newJob(), newJob()];
    for (const job of [stale, mixed, recent]) {
      await storage.checkpoints.save(job, 'a', ALL_BYTES);
      await storage.checkpoints.save(job, 'b', ALL_BYTES);
    }
    const backdate = (job: string, name: string, ageMs: number) => {
      const when = new Date(Date.now() - ageMs);
      return utimes(path.join(storage.root, '.checkpoints', job, name), when, when);
    };
    for (const name of ['a', 'b']) await backdate(stale, name, 3 * DAY_MS);
    await backdate(mixed, 'a', 3 * DAY_MS); // its 'b' is fresh: the job may still be continued
    // Older than the retention asked for, younger than STALE_CHECKPOINT_MS.
    for (const name of ['a', 'b']) await backdate(recent, name, 1.5 * DAY_MS);

    expect(await storage.sweep(DAY_MS)).toBe(2);
    expect(await storage.checkpoints.list(stale)).toEqual(new Set());
    expect(await readdir(path.join(storage.root, '.checkpoints'))).not.toContain(stale);
    expect(await storage.checkpoints.list(mixed)).toEqual(new Set(['a', 'b']));
    expect(await storage.checkpoints.list(recent)).toEqual(new Set(['a', 'b']));
    expect(await storage.sweep(DAY_MS)).toBe(0);
  });
});

describe('S3Storage checkpoints in the bucket', () => {
  it('lie under <prefix>checkpoints/<job>/<name>, private and never cached', async () => {
    const storage = s3Storage();
    const job = newJob();
    await storage.checkpoints.save(job, 'one', ALL_BYTES);
    const head = await storage.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `${storage.options.prefix}checkpoints/${job}/one` }));
    expect(head.ContentLength).toBe(ALL_BYTES.length);
    expect(head.ContentType).toBe('application/octet-stream');
    expect(head.CacheControl).toBe('private, no-store');
  });

  it('are swept once older than STALE_CHECKPOINT_MS, and counted', async () => {
    const storage = s3Storage();
    const [stale, recent] = [newJob(), newJob()];
    for (const job of [stale, recent]) {
      await storage.checkpoints.save(job, 'a', ALL_BYTES);
      await storage.checkpoints.save(job, 'b', ALL_BYTES);
    }
    const key = (job: string, name: string) => `${storage.options.prefix}checkpoints/${job}/${name}`;
    for (const name of ['a', 'b']) {
      await s3.backdate(key(stale, name), new Date(Date.now() - 3 * DAY_MS));
      await s3.backdate(key(recent, name), new Date(Date.now() - 1.5 * DAY_MS));
    }

    expect(await storage.sweep(DAY_MS)).toBe(2);
    expect(await storage.checkpoints.list(stale)).toEqual(new Set());
    expect(await storage.checkpoints.list(recent)).toEqual(new Set(['a', 'b']));
    expect(await storage.sweep(0)).toBe(0);
  });
});
