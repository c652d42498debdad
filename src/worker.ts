import closeWithGrace from 'close-with-grace';
import { pino } from 'pino';
import { attempt, ConfigError, exitOnConfigError, loadConfig, type Config } from './config.js';
import { mediaToolProblems, mediaToolsMessage } from './media/capabilities.js';
import { killAllChildren } from './media/process.js';
import { resolveMediaTools } from './media/tools.js';
import { openWorker } from './jobs/open-worker.js';

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

const config = attempt(workerConfig, exitOnConfigError('voxreel worker'));

const mediaProblems = await mediaToolProblems(resolveMediaTools(config.paths));
if (mediaProblems.length > 0) {
  console.error(mediaToolsMessage(mediaProblems));
  process.exit(1);
}

const log = pino({
  level: config.logLevel,
  ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l' } } } : {}),
});
process.once('exit', killAllChildren);
const worker = await openWorker(config, log).catch(exitOnConfigError('voxreel worker'));

closeWithGrace({ delay: config.shutdownGraceMs }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'closing after an error');
  else log.info({ signal }, 'closing');
  await worker.close(Math.max(0, config.shutdownGraceMs - 1000));
});

log.info({ queue: config.queueName, concurrency: config.concurrency, voices: worker.voices }, 'voxreel worker ready');
