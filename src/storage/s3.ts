import { createReadStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  paginateListObjectsV2,
  PutObjectCommand,
  S3Client,
  type _Object,
  type ObjectIdentifier,
  type PutObjectCommandInput,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Config, StorageConfig } from '../config.js';
import { abortError } from '../errors.js';
import { assertCheckpointName, STALE_CHECKPOINT_MS, type CheckpointStore } from './checkpoints.js';
import { contentTypeOf } from './content-types.js';
import { FILE_KINDS, randomName, storageUnavailable, type FileKind, type OpenOptions, type PendingFile, type Storage } from './storage.js';
import { pendingFile, removeOlderThan, STALE_TEMP_MS, tempFileName } from './temp-files.js';

export type S3Config = Extract<StorageConfig, { kind: 's3' }>;

export interface S3StorageOptions extends S3Config {
  /** The bucket's public or CDN address (CDN_URL), for URLs when they are not presigned. */
  publicUrl: string;
  /** Where files are written before they are uploaded: scratch space, on a disk with room for the largest output. */
  tempDir: string;
  /** How long an upload keeps trying while the server is out of reach (default 120 s; a job's deadline ends it sooner). */
  patienceMs?: number;
}

/** Readiness asks the bucket at most this often (probes come every few seconds, from several places). */
const WRITABLE_CACHE_MS = 5_000;
const WRITABLE_TIMEOUT_MS = 3_000;
/** DeleteObjects takes at most this many keys. */
const DELETE_BATCH = 1_000;
/** Uploads are streamed from disk, which the SDK never retries (it cannot rewind a stream): we do, from a fresh body. */
/** An upload that finds the server out of reach tries again, the waits doubling from this up to UPLOAD_RETRY_MAX_MS... */
const UPLOAD_RETRY_MS = 200;
const UPLOAD_RETRY_MAX_MS = 5_000;
/** ...for this long at most, or until the job's deadline: an outage shorter than both costs a wait, not the job. */
const UPLOAD_PATIENCE_MS = 120_000;
/** Names are random (or a job's own, re-rendered the same), so a cached copy is always right: as local files. */
const PUBLIC_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** The folder of jobs' checkpoints under the prefix, beside the kinds' folders: `checkpoints/<job>/<name>`. */
const CHECKPOINTS_FOLDER = 'checkpoints/';

/** What one PUT sends. */
interface Upload {
  /** A fresh body for each attempt (a stream is read only once): `() => createReadStream(file)`, `() => buffer`. */
  body: () => PutObjectCommandInput['Body'];
  bytes: number;
  contentType: string;
  cacheControl: string;
}

/**
 * Files in an S3-compatible bucket (AWS S3, MinIO, Cloudflare R2...) under `<prefix><kind>/<name>.<ext>`. A file is
 * written on local disk first and sent with one PUT when committed, so that it appears whole or not at all.
 * Credentials come from the SDK's default chain (AWS_ACCESS_KEY_ID..., a profile, an instance role).
 */
export class S3Storage implements Storage {
  readonly client: S3Client;
  readonly checkpoints: CheckpointStore;
  private readiness?: { at: number; result: Promise<boolean> };
  /** Since when the bucket has been out of reach (an upload found it so), until an operation reaches it again. */
  private downSince: number | undefined;

  get unavailable(): boolean {
    return this.downSince !== undefined;
  }

  constructor(readonly options: S3StorageOptions) {
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      // Since 3.729 the SDK adds CRC32 checksums to every upload, sent as aws-chunked trailers, which several
      // S3-compatible servers reject or store as part of the body. Only where an operation requires one
      // (DeleteObjects) is it sent; AWS, MinIO and R2 accept either way.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // A server that stops answering fails the request instead of holding a job (and its limiter slot) for ever.
      requestHandler: { connectionTimeout: 10_000, socketTimeout: 60_000 },
      // Its only warning is "a streaming request is not retried": put() retries itself.
      logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    });
    this.checkpoints = new S3Checkpoints(this.client, options.bucket, this.objectKey(CHECKPOINTS_FOLDER), (key, upload, signal) => this.put(key, upload, signal));
  }

  newName(): string {
    return randomName();
  }

  async pending(kind: FileKind, name: string, extension: string): Promise<PendingFile> {
    const key = `${kind}/${name}.${extension}`;
    await mkdir(this.options.tempDir, { recursive: true });
    const tempPath = path.join(this.options.tempDir, tempFileName(kind, name, extension));
    return pendingFile(tempPath, async (signal) => {
      const { size } = await stat(tempPath);
      const cacheControl = this.options.presignSeconds > 0 ? `private, max-age=${this.options.presignSeconds}` : PUBLIC_CACHE_CONTROL;
      const upload = { body: () => createReadStream(tempPath), bytes: size, contentType: contentTypeOf(key), cacheControl };
      await this.put(this.objectKey(key), upload, signal);
      return { key, bytes: size, url: await this.urlOf(key) };
    });
  }

  async urlOf(key: string): Promise<string> {
    const { presignSeconds, publicUrl } = this.options;
    if (presignSeconds > 0) {
      return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) }), { expiresIn: presignSeconds });
    }
    return `${publicUrl}/${this.objectKey(key).split('/').map(encodeURIComponent).join('/')}`;
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) }));
      return true;
    } catch (error) {
      if (httpStatusOf(error) === 404) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) }));
  }

  /**
   * Deletes the objects under each kind's folder last modified more than maxAgeMs ago (a bucket lifecycle rule does
   * the same without the service), and checkpoints older than STALE_CHECKPOINT_MS (or maxAgeMs, if longer);
   * temporary files abandoned by a crash go too, as LocalStorage's do.
   */
  async sweep(maxAgeMs: number): Promise<number> {
    let removed = await removeOlderThan(this.options.tempDir, Math.max(maxAgeMs, STALE_TEMP_MS));
    for (const kind of FILE_KINDS) removed += await deleteListed(this.client, this.options.bucket, this.objectKey(`${kind}/`), olderThan(maxAgeMs));
    removed += await deleteListed(this.client, this.options.bucket, this.objectKey(CHECKPOINTS_FOLDER), olderThan(Math.max(maxAgeMs, STALE_CHECKPOINT_MS)));
    return removed;
  }

  /** Whether the bucket answers to our credentials (HeadBucket), asked at most every few seconds. */
  writable(): Promise<boolean> {
    const now = Date.now();
    if (this.readiness === undefined || now - this.readiness.at > WRITABLE_CACHE_MS) {
      const asked = this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }), { abortSignal: AbortSignal.timeout(WRITABLE_TIMEOUT_MS) });
      this.readiness = {
        at: now,
        result: asked.then(
          () => {
            this.downSince = undefined;
            return true;
          },
          () => false,
        ),
      };
    }
    return this.readiness.result;
  }

  private objectKey(key: string): string {
    return `${this.options.prefix}${key}`;
  }

  /**
   * Sends the upload to `objectKey` with one PUT (atomic: the object is all there or absent). While the server is
   * out of reach (no answer, 429, 5xx) it is sent again with a fresh body, the waits doubling up to 5 s, until
   * UPLOAD_PATIENCE_MS or `signal` (the job's deadline) ends the wait: then STORAGE_UNAVAILABLE (503, Retry-After).
   */
  private async put(objectKey: string, upload: Upload, signal?: AbortSignal): Promise<void> {
    const giveUpAt = Date.now() + (this.options.patienceMs ?? UPLOAD_PATIENCE_MS);
    for (let attempt = 1; ; attempt += 1) {
      const command = new PutObjectCommand({
        Bucket: this.options.bucket,
        Key: objectKey,
        Body: upload.body(),
        ContentLength: upload.bytes,
        ContentType: upload.contentType,
        CacheControl: upload.cacheControl,
      });
      try {
        await this.client.send(command, { abortSignal: signal });
        this.downSince = undefined;
        return;
      } catch (error) {
        if (signal?.aborted) throw abortError(signal.reason);
        if (!isTransient(error)) throw error;
        this.downSince ??= Date.now();
        const wait = Math.min(UPLOAD_RETRY_MAX_MS, UPLOAD_RETRY_MS * 2 ** (attempt - 1));
        if (Date.now() + wait > giveUpAt) {
          throw storageUnavailable(error);
        }
        await delay(wait, undefined, { signal }).catch(() => {
          throw abortError(signal?.reason);
        });
      }
    }
  }

}

/**
 * S3Storage's checkpoints: objects `<folder><job>/<name>` (`folder` is `<prefix>checkpoints/`), private and never
 * cached, written with S3Storage's one PUT (retried while the server is out of reach).
 */
class S3Checkpoints implements CheckpointStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly folder: string,
    private readonly put: (objectKey: string, upload: Upload, signal?: AbortSignal) => Promise<void>,
  ) {}

  async list(job: string, signal?: AbortSignal): Promise<Set<string>> {
    const prefix = this.jobPrefix(job);
    const names = new Set<string>();
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucket, Prefix: prefix })) {
      if (signal?.aborted) throw abortError(signal.reason);
      for (const { Key } of page.Contents ?? []) if (Key !== undefined) names.add(Key.slice(prefix.length));
    }
    return names;
  }

  async save(job: string, name: string, content: Buffer, signal?: AbortSignal): Promise<void> {
    const upload = { body: () => content, bytes: content.length, contentType: 'application/octet-stream', cacheControl: 'private, no-store' };
    await this.put(this.keyOf(job, name), upload, signal);
  }

  async load(job: string, name: string, signal?: AbortSignal): Promise<Buffer | undefined> {
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(job, name) }), { abortSignal: signal });
      if (response.Body === undefined) return Buffer.alloc(0);
      return Buffer.from(await response.Body.transformToByteArray());
    } catch (error) {
      if (httpStatusOf(error) === 404 || (error as Error | undefined)?.name === 'NoSuchKey') return undefined;
      if (signal?.aborted) throw abortError(signal.reason);
      throw error;
    }
  }

  async clear(job: string): Promise<void> {
    await deleteListed(this.client, this.bucket, this.jobPrefix(job), () => true);
  }

  private jobPrefix(job: string): string {
    assertCheckpointName(job);
    return `${this.folder}${job}/`;
  }

  private keyOf(job: string, name: string): string {
    assertCheckpointName(name);
    return `${this.jobPrefix(job)}${name}`;
  }
}

/** Deletes the objects under `prefix` that `chosen` picks, as one listing goes, DELETE_BATCH at a time; returns how many. */
async function deleteListed(client: S3Client, bucket: string, prefix: string, chosen: (object: _Object) => boolean): Promise<number> {
  let removed = 0;
  let batch: ObjectIdentifier[] = [];
  for await (const page of paginateListObjectsV2({ client }, { Bucket: bucket, Prefix: prefix })) {
    for (const object of page.Contents ?? []) {
      if (object.Key !== undefined && chosen(object)) batch.push({ Key: object.Key });
      if (batch.length === DELETE_BATCH) {
        removed += await deleteAll(client, bucket, batch);
        batch = [];
      }
    }
  }
  if (batch.length > 0) removed += await deleteAll(client, bucket, batch);
  return removed;
}

/** For deleteListed: objects last modified more than maxAgeMs ago. */
function olderThan(maxAgeMs: number): (object: _Object) => boolean {
  const cutoff = Date.now() - maxAgeMs;
  return ({ LastModified }) => LastModified !== undefined && LastModified.getTime() < cutoff;
}

/** One DeleteObjects call; a key the server could not delete fails the sweep (the next one tries again). */
async function deleteAll(client: S3Client, bucket: string, objects: ObjectIdentifier[]): Promise<number> {
  const { Errors: errors = [] } = await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: objects, Quiet: true } }));
  const [first] = errors;
  if (first) throw new Error(`S3 could not delete ${errors.length} object(s), first ${first.Key ?? '?'}: ${first.Code ?? ''} ${first.Message ?? ''}`);
  return objects.length;
}

function httpStatusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

/** A network failure (no answer at all), throttling or a server error: worth sending again. */
function isTransient(error: unknown): boolean {
  const status = httpStatusOf(error);
  return status === undefined || status === 429 || status >= 500;
}

/** STORAGE=s3 (see StorageBackend). */
export async function openStorage(config: Config, options: Pick<OpenOptions, 'tempDir'>): Promise<Storage> {
  if (config.storage.kind !== 's3') throw new Error(`s3.ts opened for STORAGE=${config.storage.kind}`);
  return new S3Storage({ ...config.storage, publicUrl: config.cdnUrl, tempDir: await options.tempDir() });
}
