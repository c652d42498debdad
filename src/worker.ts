import { pino } from 'pino';
import { boot } from './boot.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { startEarly } from './app/early-start.js';

/**
 * `voxreel worker`: renders jobs from the Redis queue that API processes (with the same REDIS_URL, storage and
 * ASSETS_DIR) fill. Any number may run, on any machine; each runs CONCURRENCY jobs at once.
 */
function workerConfig(): Config & { redisUrl: string } {
  const config = loadConfig();
  const { redisUrl } = config;
  if (!redisUrl) throw new ConfigError('REDIS_URL is required by `voxreel worker`: the queue it takes jobs from.');
  // The URLs a worker writes into answers must be the ones clients fetch from, not this process's own port.
  if (!config.cdnUrlGiven && config.storage.kind === 'local') {
    throw new ConfigError('CDN_URL is required by `voxreel worker` with local storage: the address clients fetch OUTPUT_DIR from (the API serves it under /files).');
  }
  return { ...config, redisUrl };
}

const { config, running } = await boot('voxreel worker', workerConfig, async (config, logger) => {
  const log = pino(logger);
  // The engines start first; the rest of the worker is loaded while they do.
  const early = await startEarly(config, log);
  const { openWorker } = await import('./app/open-worker.js');
  const worker = await openWorker(config, log, { early });
  return { log, voices: worker.voices, close: (stopAfterMs: number) => worker.close(stopAfterMs) };
});
running.log.info({ queue: config.queueName, concurrency: config.concurrency, voices: running.voices }, 'voxreel worker ready');
