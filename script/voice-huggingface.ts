import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { VoiceError } from './voice-errors.js';
import { voiceFileName, type Expectation, type VoiceFiles } from './voice-store.js';

export const DEFAULT_PIPER_VOICES_URL = 'https://huggingface.co/rhasspy/piper-voices/resolve/main';
const CATALOG_MAX_BYTES = 32 * 1024 * 1024;

export interface DownloadLimits {
  /** A transfer that receives nothing for this long (connecting included) is abandoned. */
  idleTimeoutMs: number;
  signal?: AbortSignal;
}

/** One voice of the catalog (`voices.json` at the root of rhasspy/piper-voices); other fields are ignored. */
const CatalogVoice = Type.Object({
  key: Type.String(),
  files: Type.Record(Type.String(), Type.Object({ size_bytes: Type.Integer({ minimum: 0 }), md5_digest: Type.String() })),
});

export interface CatalogFile extends Expectation {
  /** Path in the repository, e.g. `en/en_US/lessac/medium/en_US-lessac-medium.onnx`. */
  path: string;
}

/**
 * Runs `consume` on the body of a GET, aborting when no byte has come for `idleTimeoutMs` (so a server that
 * hangs mid-body fails within that bound, while a slow but moving download of a large model goes on).
 */
async function download<T>(url: string, limits: DownloadLimits, consume: (body: AsyncIterable<Buffer>) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(
      () => controller.abort(new VoiceError('DOWNLOAD_TIMEOUT', `${url}: nothing received for ${limits.idleTimeoutMs / 1000} s`)),
      limits.idleTimeoutMs,
    );
  };
  const forward = () => controller.abort(limits.signal?.reason);
  if (limits.signal?.aborted) forward();
  limits.signal?.addEventListener('abort', forward, { once: true });
  touch();
  try {
    const response = await fetch(url, { signal: controller.signal });
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new VoiceError('DOWNLOAD_FAILED', `${url}: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
    }
    const source = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>) as AsyncIterable<Buffer>;
    async function* watched() {
      for await (const chunk of source) {
        touch();
        yield chunk;
      }
    }
    return await consume(watched());
  } catch (error) {
    if (controller.signal.aborted) throw controller.signal.reason;
    if (error instanceof VoiceError) throw error;
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new VoiceError('DOWNLOAD_FAILED', `${url}: download failed: ${reason}`, { cause: error });
  } finally {
    clearTimeout(timer);
    limits.signal?.removeEventListener('abort', forward);
  }
}

export function downloadFile(url: string, file: string, limits: DownloadLimits): Promise<void> {
  return download(url, limits, (body) => pipeline(body, createWriteStream(file, { flags: 'wx' })));
}

async function fetchCatalog(baseUrl: string, limits: DownloadLimits): Promise<Record<string, unknown>> {
  const url = `${baseUrl}/voices.json`;
  const text = await download(url, limits, async (body) => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > CATALOG_MAX_BYTES) throw new VoiceError('DOWNLOAD_FAILED', `${url}: larger than ${CATALOG_MAX_BYTES} bytes`);
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  });
  try {
    const catalog: unknown = JSON.parse(text);
    if (typeof catalog === 'object' && catalog !== null && !Array.isArray(catalog)) return catalog as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new VoiceError('DOWNLOAD_FAILED', `${url}: not a voice catalog (a JSON object of voices)`);
}

/** Finds a voice in the catalog by its key: its model and config, with their sizes and md5 digests. */
export async function findCatalogVoice(
  baseUrl: string,
  name: string,
  limits: DownloadLimits,
): Promise<VoiceFiles<CatalogFile>> {
  const catalog = await fetchCatalog(baseUrl, limits);
  const voice = Object.hasOwn(catalog, name) ? catalog[name] : undefined;
  if (!Value.Check(CatalogVoice, voice) || voice.key !== name) throw new VoiceError('UNKNOWN_VOICE', `${name} is not in ${baseUrl}/voices.json`);
  const fileOf = (fileName: string): CatalogFile => {
    const found = Object.entries(voice.files).find(([filePath]) => filePath === fileName || filePath.endsWith(`/${fileName}`));
    if (!found) throw new VoiceError('UNKNOWN_VOICE', `${baseUrl}/voices.json lists no ${fileName} for ${name}`);
    const [filePath, { size_bytes: size, md5_digest: md5 }] = found;
    return { authority: 'voices.json', path: filePath, size, md5: md5.toLowerCase() };
  };
  return { model: fileOf(voiceFileName(name, 'model')), config: fileOf(voiceFileName(name, 'config')) };
}

export function fileUrl(baseUrl: string, filePath: string): string {
  return `${baseUrl}/${filePath.split('/').map(encodeURIComponent).join('/')}`;
}
