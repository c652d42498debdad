import closeWithGrace from 'close-with-grace';
import { pino } from 'pino';
import { ConfigError, loadConfig } from './config.js';
import { Limiter } from './jobs/limiter.js';
import { jobPipeline } from './jobs/pipeline.js';
import { connectRedis } from './jobs/redis-connection.js';
import { RedisJobWorker } from './jobs/redis-worker.js';
import { mediaToolProblems, mediaToolsMessage } from './media/capabilities.js';
import { killAllChildren } from './media/process.js';
import { resolveMediaTools } from './media/tools.js';
import { openServices } from './services.js';
import { SentenceCache } from './cache/sentence-cache.js';

/**
 * `voxreel worker`: renders jobs from the Redis queue that API processes (with the same REDIS_URL, storage and
 * ASSETS_DIR) fill. Any number may run, on any machine; each runs CONCURRENCY jobs at once.
 */
let config;
try {
  config = loadConfig();
  if (!config.redisUrl) throw new ConfigError('REDIS_URL is required by `voxreel worker`: the queue it takes jobs from.');
  // The URLs a worker writes into answers must be the ones clients fetch from, not this process's own port.
  if (!process.env.CDN_URL && config.storage.kind === 'local') {
    throw new ConfigError('CDN_URL is required by `voxreel worker` with local storage: the address clients fetch OUTPUT_DIR from (the API serves it under /files).');
  }
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`voxreel worker: ${error.message}`);
  process.exit(1);
}

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
// A worker takes no uploads, so nothing waits at this gate; the folders belong to the API processes.
const gate = new Limiter({ concurrency: config.concurrency, queueLength: 0 });
const sentenceCache = new SentenceCache(config.cache.sentenceBytes);
const services = await openServices(config, {}, { gate, sentenceCache, ownsFolders: false });
const splicer = await services.splicer.run();
if (!splicer.ok) log.warn({ err: splicer.cause, reason: splicer.reason }, 'the H.264 splicer failed its self-check: videos are rendered the plain way');
const redis = connectRedis(config.redisUrl);
const pipeline = jobPipeline(config, services, redis, undefined, log);
const worker = await RedisJobWorker.start({ config, pipeline, redis, log });

closeWithGrace({ delay: config.shutdownGraceMs }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'closing after an error');
  else log.info({ signal }, 'closing');
  await worker.close(Math.max(0, config.shutdownGraceMs - 1000));
  await pipeline.completion.close();
  await services.close();
  await redis.quit().catch(() => undefined);
});

log.info({ queue: config.queueName, concurrency: config.concurrency, voices: services.engines.listVoices().length }, 'voxreel worker ready');
