import type { Config } from '../config.js';
import { LocalStorage } from './local.js';
import { S3Storage } from './s3.js';
import type { Storage } from './storage.js';

/**
 * The storage STORAGE chose, ready for use: OUTPUT_DIR (its folders made, an earlier crash's temporary files
 * removed) or the bucket, whose files are written first in `scratchDir` (scratch space: a crash's leftovers there
 * are removed at the next start).
 */
export async function openStorage(config: Config, scratchDir: string): Promise<Storage> {
  if (config.storage.kind === 's3') return new S3Storage({ ...config.storage, publicUrl: config.cdnUrl, tempDir: scratchDir });
  const storage = new LocalStorage(config.outputDir, config.cdnUrl);
  await storage.init();
  return storage;
}
