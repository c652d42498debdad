import { mkdtemp, rm, utimes } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, vi } from 'vitest';

/** The little of s3rver (a CommonJS package without types) that the tests use. */
interface S3rverServer {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
type S3rverOptions = { address: string; port: number; directory: string; silent: boolean; configureBuckets: Array<{ name: string }> };
const S3rver = createRequire(import.meta.url)('s3rver') as new (options: S3rverOptions) => S3rverServer;

export interface RunningS3 {
  /** For the SDK's `endpoint` (with path-style addressing). */
  endpoint: string;
  bucket: string;
  /** The bucket's public address, as CDN_URL would give it. */
  bucketUrl: string;
  /** Sets an object's LastModified (s3rver reads it from its file's mtime), as if it had been written then. */
  backdate(objectKey: string, date: Date): Promise<void>;
  stop(): Promise<void>;
}

/** s3rver's one built-in account; it accepts no other access key. */
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };

/** An S3-compatible server (s3rver) in this process, on a free loopback port, with one empty bucket. */
export async function startS3(bucket = 'voxreel'): Promise<RunningS3> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'voxreel-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    bucketUrl: `${endpoint}/${bucket}`,
    backdate: async (objectKey, date) => {
      const parts = objectKey.split('/');
      const file = path.join(directory, bucket, ...parts.slice(0, -1), `${parts.at(-1) ?? ''}._S3rver_object`);
      await utimes(file, date, date);
    },
    stop: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * One S3 server for the tests of this file, with its credentials in the environment, where the SDK's default
 * chain finds them as it would in production.
 */
export function useS3(): RunningS3 {
  let running: RunningS3 | undefined;
  beforeAll(async () => {
    for (const [name, value] of Object.entries(CREDENTIALS)) vi.stubEnv(name, value);
    running = await startS3();
  });
  afterAll(async () => {
    await running?.stop();
    vi.unstubAllEnvs();
  });
  const current = (): RunningS3 => {
    if (!running) throw new Error('The S3 server starts in beforeAll: use it inside the tests.');
    return running;
  };
  return {
    get endpoint() {
      return current().endpoint;
    },
    get bucket() {
      return current().bucket;
    },
    get bucketUrl() {
      return current().bucketUrl;
    },
    backdate: (objectKey, date) => current().backdate(objectKey, date),
    stop: () => current().stop(),
  };
}
