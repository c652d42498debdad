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
  type ObjectIdentifier,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Config, StorageConfig } from '../config.js';
import { abortError } from '../errors.js';
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
/** Uploads are streamed from disk, which the SDK never retries (it cannot rewind a stream): we do, from the file. */
/** An upload that finds the server out of reach tries again, the waits doubling from this up to UPLOAD_RETRY_MAX_MS... */
const UPLOAD_RETRY_MS = 200;
const UPLOAD_RETRY_MAX_MS = 5_000;
/** ...for this long at most, or until the job's deadline: an outage shorter than both costs a wait, not the job. */
const UPLOAD_PATIENCE_MS = 120_000;
/** Names are random (or a job's own, re-rendered the same), so a cached copy is always right: as local files. */
const PUBLIC_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/**
 * Files in an S3-compatible bucket (AWS S3, MinIO, Cloudflare R2...) under `<prefix><kind>/<name>.<ext>`. A file is
 * written on local disk first and sent with one PUT when committed, so that it appears whole or not at all.
 * Credentials come from the SDK's default chain (AWS_ACCESS_KEY_ID..., a profile, an instance role).
 */
export class S3Storage implements Storage {
  readonly client: S3Client;
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
  }

  newName(): string {
    return randomName();
  }

  async pending(kind: FileKind, name: string, extension: string): Promise<PendingFile> {
    const key = `${kind}/${name}.${extension}`;
    await mkdir(this.options.tempDir, { recursive: true });
    const tempPath = path.join(this.options.tempDir, tempFileName(kind, name, extension));
    return pendingFile(tempPath, async (signal) => ({ key, bytes: await this.put(key, tempPath, signal), url: await this.urlOf(key) }));
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
   * the same without the service); temporary files abandoned by a crash go too, as LocalStorage's do.
   */
  async sweep(maxAgeMs: number): Promise<number> {
    const cutoff = Date.now() - maxAgeMs;
    let removed = await removeOlderThan(this.options.tempDir, Math.max(maxAgeMs, STALE_TEMP_MS));
    for (const kind of FILE_KINDS) {
      let batch: ObjectIdentifier[] = [];
      const pages = paginateListObjectsV2({ client: this.client }, { Bucket: this.options.bucket, Prefix: this.objectKey(`${kind}/`) });
      for await (const page of pages) {
        for (const { Key, LastModified } of page.Contents ?? []) {
          if (Key !== undefined && LastModified !== undefined && LastModified.getTime() < cutoff) batch.push({ Key });
          if (batch.length === DELETE_BATCH) {
            removed += await this.deleteAll(batch);
            batch = [];
          }
        }
      }
      if (batch.length > 0) removed += await this.deleteAll(batch);
    }
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
   * Sends the file with one PUT (atomic: the object is all there or absent); returns its size. While the server is
   * out of reach (no answer, 429, 5xx) it is sent again with a fresh read, the waits doubling up to 5 s, until
   * UPLOAD_PATIENCE_MS or `signal` (the job's deadline) ends the wait: then STORAGE_UNAVAILABLE (503, Retry-After).
   */
  private async put(key: string, file: string, signal?: AbortSignal): Promise<number> {
    const { size } = await stat(file);
    const giveUpAt = Date.now() + (this.options.patienceMs ?? UPLOAD_PATIENCE_MS);
    const cacheControl = this.options.presignSeconds > 0 ? `private, max-age=${this.options.presignSeconds}` : PUBLIC_CACHE_CONTROL;
    for (let attempt = 1; ; attempt += 1) {
      const command = new PutObjectCommand({
        Bucket: this.options.bucket,
        Key: this.objectKey(key),
        Body: createReadStream(file),
        ContentLength: size,
        ContentType: contentTypeOf(key),
        CacheControl: cacheControl,
      });
      try {
        await this.client.send(command, { abortSignal: signal });
        this.downSince = undefined;
        return size;
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

  /** One DeleteObjects call; a key the server could not delete fails the sweep (the next one tries again). */
  private async deleteAll(objects: ObjectIdentifier[]): Promise<number> {
    const { Errors: errors = [] } = await this.client.send(
      new DeleteObjectsCommand({ Bucket: this.options.bucket, Delete: { Objects: objects, Quiet: true } }),
    );
    const [first] = errors;
    if (first) throw new Error(`S3 could not delete ${errors.length} object(s), first ${first.Key ?? '?'}: ${first.Code ?? ''} ${first.Message ?? ''}`);
    return objects.length;
  }
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
