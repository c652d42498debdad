import type { Config } from '../config.js';
import type { OpenOptions, Storage, StorageBackend } from './storage.js';

/**
 * Every backend of STORAGE, each imported only when chosen (the AWS SDK is large, and warns about Node versions at
 * import). A new kind in config.ts's StorageConfig fails to type-check until it has its line.
 */
export const STORAGE_BACKENDS: Record<Config['storage']['kind'], () => Promise<StorageBackend>> = {
  local: () => import('./local.js'),
  s3: () => import('./s3.js'),
};

/** The storage STORAGE names, opened. */
export async function openStorage(config: Config, options: OpenOptions): Promise<Storage> {
  const backend = await STORAGE_BACKENDS[config.storage.kind]();
  return backend.openStorage(config, options);
}
