import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Type, type Static } from '@sinclair/typebox';
import { AppError, isAppError } from '../errors.js';
import { content, writeAtomically } from '../storage/atomic-write.js';
import { freeBytes } from '../storage/disk-space.js';
import { ownerFolder } from '../storage/owner-folder.js';
import { readRecord } from '../storage/records.js';
import type { Ffmpeg } from '../media/ffmpeg.js';
import { ASSET_FORMATS, ASSET_KINDS, FORMATS, SNIFF_BYTES, id3End, readImageHeader, sniff, type AssetFormat, type AssetKind, type ImageHeader } from './formats.js';
import { readBook, type Book } from './epub.js';
import { inspectAsset, refuse, type AssetFacts, type AssetLimits } from './inspect.js';
import { AssetQuota } from './quota.js';

/** 128 random bits, base64url: what `newId` makes and the only shape an id may have. */
const ID = /^[A-Za-z0-9_-]{22}$/;
const TEMP_DIR = '.tmp';
/** No upload takes an hour to arrive and be checked: a temporary file that old was abandoned. */
const STALE_TEMP_MS = 3_600_000;
/** Formats an ID3 tag may come before. */
const AFTER_ID3: readonly AssetFormat[] = ['mp3', 'aac', 'flac'];

/** What is kept beside each asset (`<id>.json`), and what the API answers about it. */
const AssetRecord = Type.Object({
  id: Type.String({ pattern: ID.source }),
  kind: Type.Union(ASSET_KINDS.map((kind) => Type.Literal(kind))),
  format: Type.Union(ASSET_FORMATS.map((format) => Type.Literal(format))),
  bytes: Type.Integer({ minimum: 1 }),
  width: Type.Optional(Type.Integer({ minimum: 1 })),
  height: Type.Optional(Type.Integer({ minimum: 1 })),
  duration: Type.Optional(Type.Number({ minimum: 0 })),
  /** Audio: integrated loudness in LUFS (EBU R128), measured on upload; music is levelled against the voice with it. */
  loudness: Type.Optional(Type.Number()),
  /** A clip in yuv420p, tagged BT.709, limited range: at the frame's size it is used as it is. */
  bt709: Type.Optional(Type.Boolean()),
  /** A book: its title, chapters and characters, as read on upload (assets/epub.ts). */
  title: Type.Optional(Type.String()),
  chapters: Type.Optional(Type.Integer({ minimum: 1 })),
  characters: Type.Optional(Type.Integer({ minimum: 1 })),
  created: Type.String(),
});
type AssetRecord = Static<typeof AssetRecord>;

export interface Asset extends AssetRecord {
  /** When it stops being usable (ISO 8601), or null when assets are kept. */
  expiresAt: string | null;
}

/** An asset ready for ffmpeg: its file, and what it was found to be. */
export interface ResolvedAsset {
  path: string;
  kind: AssetKind;
  format: AssetFormat;
  width?: number;
  height?: number;
  duration?: number;
  loudness?: number;
  bt709?: boolean;
}

/** A received file waiting in the temporary folder: `admit` checks and stores it; `discard` removes it. */
export interface Upload {
  readonly path: string;
  readonly bytes: number;
  readonly format: AssetFormat;
  discard(): Promise<void>;
}

/** The work gate the checks wait at (the app's Limiter): ffprobe and ffmpeg count as jobs. */
export interface Gate {
  run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

export interface AssetStoreOptions {
  /** A private folder, never served. */
  dir: string;
  limits: AssetLimits;
  /** How long an asset stays usable; 0 keeps it. */
  retentionMs: number;
  /** How long past its expiry an asset's files stay, for a render that resolved it just before (the longest job). */
  graceMs: number;
  /** Bytes of live assets one owner may keep (ASSET_QUOTA_MB); 0: no cap. */
  quotaBytes: number;
  /** Below this much free space in the folder, uploads are refused (MIN_FREE_DISK_MB). */
  minFreeBytes: number;
}

/**
 * Uploaded images and audio, each a file `<id>.<ext>` with its record `<id>.json` in its owner's folder of one
 * private folder: an asset belongs to the client that uploaded it, and to everyone else it does not exist. A file
 * is received into `.tmp` (cut at the byte limit, refused at its first bytes when they are not a supported
 * format), checked, and renamed into place with its record last: an asset exists when its record does.
 */
export class AssetStore {
  private readonly tempDir: string;
  private readonly quota: AssetQuota;

  constructor(
    private readonly options: AssetStoreOptions,
    private readonly ffmpeg: Ffmpeg,
    private readonly gate: Gate,
  ) {
    this.tempDir = path.join(options.dir, TEMP_DIR);
    this.quota = new AssetQuota(options.quotaBytes, (owner) => this.usage(owner));
  }

  /** Creates the folder and removes what an earlier process left half-received (one process per folder, as for OUTPUT_DIR). */
  async init(clearTemp = true): Promise<void> {
    await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
    if (clearTemp) await rm(this.tempDir, { recursive: true, force: true });
    await mkdir(this.tempDir, { recursive: true, mode: 0o700 });
  }

  /**
   * Writes `source` to a temporary file, refusing it (and reading no further) once it passes the byte limit or
   * when its first bytes are no supported format. Errors of `source` itself (a stream that ends early included) pass
   * through as they are; only a failure to write is STORAGE_FAILED.
   */
  async receive(source: Readable): Promise<Upload> {
    await this.assertFreeSpace(0);
    const temp = path.join(this.tempDir, `${randomBytes(12).toString('base64url')}.part`);
    const { maxBytes } = this.options.limits;
    const discard = () => rm(temp, { force: true });
    let bytes = 0;
    let head = Buffer.alloc(0);
    const sink = createWriteStream(temp, { flags: 'wx', mode: 0o600 });
    try {
      await pipeline(
        source,
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            bytes += chunk.length;
            if (bytes > maxBytes) throw refuse('ASSET_TOO_LARGE', `The file is larger than the limit of ${maxBytes} bytes.`);
            if (head.length < SNIFF_BYTES) {
              head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
              if (head.length === SNIFF_BYTES && sniff(head) === undefined) throw refuse('UNSUPPORTED_ASSET');
            }
            yield chunk;
          }
        },
        sink,
      );
      const format = await this.formatOf(temp, head, bytes);
      return { path: temp, bytes, format, discard };
    } catch (error) {
      // A refusal can come before the file is even open: once it has closed, it is there to be removed.
      if (!sink.closed) await new Promise<void>((resolve) => sink.once('close', () => resolve()));
      await discard();
      // Only the file system's own errors (ENOSPC, EACCES …: they name a syscall) are a failure to store; anything
      // else is the source's (a body cut short, a malformed part), the caller's to name.
      if (isAppError(error) || typeof (error as { syscall?: unknown }).syscall !== 'string') throw error;
      throw new AppError('STORAGE_FAILED', { cause: error });
    }
  }

  /**
   * Checks a received file (the owner's quota and the free space first, then header, ffprobe, a full decode) and
   * stores it as `owner`'s; the temporary file is gone either way.
   */
  async admit(upload: Upload, owner: string, signal?: AbortSignal): Promise<Asset> {
    let release: (() => Promise<void>) | undefined;
    try {
      await this.assertFreeSpace(upload.bytes);
      release = await this.quota.reserve(owner, upload.bytes);
      const header = FORMATS[upload.format].kind === 'image' ? await this.imageHeader(upload) : undefined;
      const facts = upload.format === 'epub' ? await bookFacts(upload.path) : await this.gate.run(() => inspectAsset(this.ffmpeg, upload.path, upload.format, header, this.options.limits, signal), signal);
      return await this.commit(upload, ownerFolder(owner), { format: upload.format, bytes: upload.bytes, ...facts });
    } finally {
      await release?.();
      await upload.discard();
    }
  }

  /** `owner`'s asset with this id, or undefined when the id is malformed, unknown, another's or expired. */
  async get(id: string, owner: string): Promise<Asset | undefined> {
    const record = await this.liveRecord(ownerFolder(owner), id);
    return record && this.asAsset(record);
  }

  /** Bytes of `owner`'s live assets. */
  async usage(owner: string): Promise<number> {
    const folder = ownerFolder(owner);
    const records = await Promise.all([...(await this.idsIn(folder))].map((id) => this.liveRecord(folder, id)));
    return records.reduce((sum, record) => sum + (record?.bytes ?? 0), 0);
  }

  /** Deletes one of `owner`'s assets; true when it was a live asset. */
  async delete(id: string, owner: string): Promise<boolean> {
    const folder = ownerFolder(owner);
    const live = (await this.liveRecord(folder, id)) !== undefined;
    if (ID.test(id)) await this.removeFiles(folder, id);
    return live;
  }

  /**
   * For a request field that names an asset (a background, a music track): its file, when the id names a live
   * asset of that kind; otherwise UNKNOWN_ASSET (422) naming the field. The file stays for the longest job after
   * the asset expires, so a render that resolved it may use it to the end.
   */
  async resolve(id: string, owner: string, kind: AssetKind, field: string): Promise<ResolvedAsset> {
    const asset = await this.get(id, owner);
    if (!asset) {
      throw new AppError('UNKNOWN_ASSET', {
        field,
        message: `${field} is not the id of an asset: it may have expired or been deleted (POST /assets uploads one).`,
      });
    }
    if (asset.kind !== kind) throw new AppError('UNKNOWN_ASSET', { field, message: `${field} takes an asset of kind ${kind}; this one is ${asset.kind}.` });
    const { format, width, height, duration, loudness, bt709 } = asset;
    return { path: this.fileOf(ownerFolder(owner), asset), kind, format, width, height, duration, loudness, bt709 };
  }

  /**
   * `owner`'s book with this id read as chapters (assets/epub.ts), with its cover's bytes when `cover` asks;
   * UNKNOWN_ASSET (422) naming `field` when the id names no live book of theirs.
   */
  async book(id: string, owner: string, field: string, options: { cover?: boolean } = {}): Promise<Book> {
    const { path: file } = await this.resolve(id, owner, 'book', field);
    return readBook(file, options);
  }

  /**
   * Removes assets expired more than the grace ago, files without a record, and abandoned temporary files; returns
   * how many assets. Files left at the top of the folder by releases before owners (no owner: nobody's) go the same way.
   */
  async sweep(): Promise<number> {
    const now = Date.now();
    const entries = await readdir(this.options.dir, { withFileTypes: true }).catch(() => []);
    const folders = ['', ...entries.filter((entry) => entry.isDirectory() && entry.name !== TEMP_DIR).map((entry) => entry.name)];
    let removed = 0;
    for (const folder of folders) {
      for (const id of await this.idsIn(folder)) {
        const record = await this.readRecord(folder, id);
        const expires = record ? this.expiry(record) : await this.orphanExpiry(folder, id);
        if (expires !== undefined && expires + this.options.graceMs < now) {
          await this.removeFiles(folder, id);
          removed += 1;
        }
      }
    }
    for (const name of await readdir(this.tempDir).catch(() => [] as string[])) {
      const file = path.join(this.tempDir, name);
      const info = await stat(file).catch(() => undefined);
      if (info && info.mtimeMs < now - STALE_TEMP_MS) await rm(file, { force: true });
    }
    return removed;
  }

  private async formatOf(file: string, head: Buffer, bytes: number): Promise<AssetFormat> {
    if (bytes === 0) throw refuse('INVALID_ASSET', 'The file is empty.');
    const sniffed = sniff(head);
    if (sniffed !== 'id3') {
      if (sniffed === undefined) throw refuse('UNSUPPORTED_ASSET');
      return sniffed;
    }
    const start = id3End(head);
    const handle = await open(file, 'r');
    try {
      const after = Buffer.alloc(SNIFF_BYTES);
      const { bytesRead } = await handle.read(after, 0, SNIFF_BYTES, start);
      const format = sniff(after.subarray(0, bytesRead));
      if (format === undefined || format === 'id3' || !AFTER_ID3.includes(format)) throw refuse('UNSUPPORTED_ASSET');
      return format;
    } finally {
      await handle.close();
    }
  }

  /** The header's dimensions, refused before any program runs when they pass the pixel limit. */
  private async imageHeader(upload: Upload): Promise<ImageHeader> {
    const handle = await open(upload.path, 'r');
    const header = await readImageHeader(handle, upload.format, upload.bytes).finally(() => handle.close());
    if (!header || header.width <= 0 || header.height <= 0) throw refuse('INVALID_ASSET', 'The image header is missing or damaged.');
    if (header.animated) throw refuse('UNSUPPORTED_ASSET', 'Animated WebP is not supported: upload a still image.');
    const pixels = header.width * header.height;
    const { maxPixels } = this.options.limits;
    if (pixels > maxPixels) {
      throw refuse('ASSET_TOO_LARGE', `The image is ${header.width}×${header.height} (${pixels} pixels); the limit is ${maxPixels} pixels.`);
    }
    return header;
  }

  /** STORAGE_FULL (507) when storing `bytes` more would leave less than MIN_FREE_DISK_MB free. */
  private async assertFreeSpace(bytes: number): Promise<void> {
    const free = await freeBytes(this.options.dir);
    if (free - bytes < this.options.minFreeBytes) {
      throw new AppError('STORAGE_FULL', { message: 'The server is low on disk space and takes no uploads now; retry later.', retryAfter: 60 });
    }
  }

  private async commit(upload: Upload, folder: string, facts: Omit<AssetRecord, 'id' | 'created'>): Promise<Asset> {
    const id = randomBytes(16).toString('base64url');
    const record: AssetRecord = { id, ...facts, created: new Date().toISOString() };
    try {
      await mkdir(path.join(this.options.dir, folder), { recursive: true, mode: 0o700 });
      await rename(upload.path, this.fileOf(folder, record));
      await writeAtomically(this.recordOf(folder, id), this.tempDir, content(JSON.stringify(record)), { mode: 0o600 });
    } catch (cause) {
      await this.removeFiles(folder, id);
      throw new AppError('STORAGE_FAILED', { cause });
    }
    return this.asAsset(record);
  }

  /** The record of a live asset in `folder` (its file present, not expired), or undefined. */
  private async liveRecord(folder: string, id: string): Promise<AssetRecord | undefined> {
    if (!ID.test(id)) return undefined;
    const record = await this.readRecord(folder, id);
    if (!record) return undefined;
    const expires = this.expiry(record);
    if (expires !== undefined && expires <= Date.now()) return undefined;
    const present = await stat(this.fileOf(folder, record)).then((info) => info.isFile(), () => false);
    return present ? record : undefined;
  }

  /** The ids that have any file in `folder` ('' for the top). */
  private async idsIn(folder: string): Promise<Set<string>> {
    const ids = new Set<string>();
    for (const name of await readdir(path.join(this.options.dir, folder)).catch(() => [] as string[])) {
      const id = name.split('.')[0] ?? '';
      if (ID.test(id)) ids.add(id);
    }
    return ids;
  }

  private asAsset(record: AssetRecord): Asset {
    const expires = this.expiry(record);
    return { ...record, expiresAt: expires === undefined ? null : new Date(expires).toISOString() };
  }

  private async readRecord(folder: string, id: string): Promise<AssetRecord | undefined> {
    return readRecord(this.recordOf(folder, id), AssetRecord, id);
  }

  /** When a record's asset expires (ms), or undefined when assets are kept. */
  private expiry(record: AssetRecord): number | undefined {
    return this.options.retentionMs > 0 ? Date.parse(record.created) + this.options.retentionMs : undefined;
  }

  /** Files of an id without a readable record (a crash between two renames) expire as if created when last written. */
  private async orphanExpiry(folder: string, id: string): Promise<number | undefined> {
    const files = [this.recordOf(folder, id), ...this.filesOf(folder, id)];
    const times = await Promise.all(files.map((file) => stat(file).then((info) => info.mtimeMs, () => 0)));
    const written = Math.max(...times);
    return written > 0 && this.options.retentionMs > 0 ? written + this.options.retentionMs : undefined;
  }

  private async removeFiles(folder: string, id: string): Promise<void> {
    // The record first: without it the asset is gone, whatever happens to its file.
    await rm(this.recordOf(folder, id), { force: true });
    await Promise.all(this.filesOf(folder, id).map((file) => rm(file, { force: true })));
  }

  /** Every file an id may have: one per format, whichever it is. */
  private filesOf(folder: string, id: string): string[] {
    return Object.values(FORMATS).map(({ extension }) => path.join(this.options.dir, folder, `${id}.${extension}`));
  }

  private fileOf(folder: string, record: Pick<AssetRecord, 'id' | 'format'>): string {
    return path.join(this.options.dir, folder, `${record.id}.${FORMATS[record.format].extension}`);
  }

  private recordOf(folder: string, id: string): string {
    return path.join(this.options.dir, folder, `${id}.json`);
  }
}

/** What a book upload is found to be: read whole (assets/epub.ts), so that one it cannot read is refused now. */
async function bookFacts(file: string): Promise<AssetFacts> {
  const book = await readBook(file);
  return { kind: 'book', ...(book.title ? { title: book.title.slice(0, 500) } : {}), chapters: book.chapters.length, characters: book.characters };
}
