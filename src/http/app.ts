import { setTimeout as delay } from 'node:timers/promises';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { AssetStore } from '../assets/store.js';
import { OPENAI_PREFIX, type Config } from '../config.js';
import type { EngineRegistry } from '../engines/index.js';
import type { Ffmpeg } from '../media/ffmpeg.js';
import type { ScratchSpace } from '../storage/scratch.js';
import { Limiter } from '../jobs/limiter.js';
import { JobRunner } from '../jobs/runner.js';
import { ClientQuota } from '../jobs/quota.js';
import access from './plugins/access.js';
import clientSignal from './plugins/client-signal.js';
import errorHandler from './plugins/error-handler.js';
import fileServing from './plugins/file-serving.js';
import httpEdge, { serverOptions } from './plugins/http-edge.js';
import metricsPlugin, { Metrics } from './plugins/metrics.js';
import assetsRoutes from './routes/assets.js';
import healthRoutes from './routes/health.js';
import openAiRoutes from './routes/openai-speech.js';
import playgroundRoutes from './routes/playground.js';
import ttsRoutes from './routes/tts.js';
import ttsVideoRoutes from './routes/tts-video.js';
import voicesRoutes from './routes/voices.js';
import type { Storage } from '../storage/storage.js';
import type { Synthesizer } from '../speech/synthesizer.js';
import type { SplicerCheck } from '../video/h264/index.js';
import type { VideoMaker } from '../video/maker.js';
import { openServices, type ServiceDeps } from '../jobs/services.js';
import type { Redis } from 'ioredis';
import type { JobResults } from '../jobs/job-results.js';
import { SentenceCache } from '../speech/sentence-cache.js';
import type { JobExecutor } from '../jobs/executor.js';
import { LocalJobQueue } from '../jobs/local-queue.js';
import { jobPipeline } from '../jobs/pipeline.js';
import type { JobQueue } from '../jobs/queue.js';
import { closeRedis, connectStateRedis, untilReachable } from '../jobs/redis/connection.js';
import { RedisJobQueue } from '../jobs/redis/queue.js';
import jobsRoutes from './routes/jobs.js';
import { version } from '../version.js';

/** Start-up waits this long at most for the splicer's self-check (Fastify's own limit for onReady is 10 s). */
const SPLICER_CHECK_WAIT_MS = 5_000;

export interface AppDeps extends ServiceDeps {
  logger?: FastifyServerOptions['logger'];
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    engines: EngineRegistry;
    ffmpeg: Ffmpeg;
    storage: Storage;
    scratch: ScratchSpace;
    metrics: Metrics;
    synthesizer: Synthesizer;
    limiter: Limiter;
    jobs: JobRunner;
    splicer: SplicerCheck;
    maker: VideoMaker;
    assets: AssetStore;
    executor: JobExecutor;
    results: JobResults;
    queue: JobQueue;
    /** Shared state of several instances (REDIS_URL); undefined when this process keeps it alone. */
    redis: Redis | undefined;
  }
}

/** Builds the whole service as a Fastify instance, ready for `inject` or `listen`; it never listens itself. */
export async function buildApp(config: Config, deps: AppDeps = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel },
    bodyLimit: config.bodyLimitBytes,
    ...serverOptions(config),
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON bodies only: Fastify also parses text/plain by default.
  app.removeContentTypeParser('text/plain');
  await app.register(httpEdge, { config });

  const limiter = new Limiter({ concurrency: config.concurrency, queueLength: config.queueLength });
  const sentenceCache = new SentenceCache(config.cache.sentenceBytes);
  const metrics = new Metrics(limiter, { sentenceCache });
  const services = await openServices(config, deps, { gate: limiter, observer: metrics, sentenceCache, ownsFolders: !config.redisUrl });
  const { storage, localStorage, engines, splicer } = services;
  app.addHook('onClose', async () => services.close());
  app.decorate('config', config);
  app.decorate('engines', engines);
  app.decorate('ffmpeg', services.ffmpeg);
  app.decorate('storage', storage);
  app.decorate('scratch', services.scratch);
  app.decorate('metrics', metrics);
  app.decorate('synthesizer', services.synthesizer);
  app.decorate('maker', services.maker);
  // The splicer's self-check runs once, at start-up; a failure only sends videos the plain way (/readyz shows it,
  // the service stays ready). Start-up waits for it (a tiny render, well under a second), so no request races its
  // ffmpeg runs, but never for more than a few seconds.
  app.decorate('splicer', splicer);
  app.addHook('onReady', async () => {
    const checked = splicer.run().then(({ ok, reason, cause }) => {
      if (!ok) app.log.warn({ err: cause, reason }, 'the H.264 splicer failed its self-check: videos are rendered the plain way');
    });
    await Promise.race([checked, delay(SPLICER_CHECK_WAIT_MS, undefined, { ref: false })]);
  });
  app.decorate('limiter', limiter);
  const quota = new ClientQuota({ ...config.clientQuota, windowMs: config.rateLimit.windowMs });
  const jobs = new JobRunner(limiter, { tts: config.ttsTimeoutMs, 'tts-video': config.videoTimeoutMs, speech: config.ttsTimeoutMs }, metrics, quota);
  app.decorate('jobs', jobs);
  const redis = config.redisUrl ? connectStateRedis(config.redisUrl, app.log) : undefined;
  if (redis && config.redisUrl) await untilReachable(redis, config.redisUrl);
  const { executor, results, completion } = jobPipeline(config, services, redis, metrics, app.log);
  const onWarning = (message: string, err: unknown) => app.log.warn({ err }, message);
  const queue: JobQueue =
    redis && config.redisUrl
      ? await RedisJobQueue.open({ config, redis, log: app.log, completion, quota })
      : new LocalJobQueue(jobs, executor, { retentionMs: config.jobRetentionMs, onFinished: (job) => void completion.finished(job), onWarning });
  app.decorate('executor', executor);
  app.decorate('results', results);
  app.decorate('queue', queue);
  app.decorate('redis', redis);
  // Closing: queued and new jobs answer SHUTTING_DOWN at once; running ones finish (server.ts stops them at the end of the grace).
  app.addHook('preClose', async () => {
    jobs.refuseNew();
    queue.refuseNew();
  });
  app.addHook('onClose', async () => {
    await queue.close();
    await completion.close();
    if (redis) await closeRedis(redis);
  });
  startRetention(app, () => storage.sweep(config.retentionMs), config.retentionMs);
  // Uploads wait for their checks at the same limiter as jobs.
  const { assets } = services;
  app.decorate('assets', assets);
  startRetention(app, () => assets.sweep(), config.assets.retentionMs);

  await app.register(errorHandler);
  await app.register(clientSignal);
  await app.register(access, { config, redis });
  await app.register(metricsPlugin, { metrics });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'voxreel',
        version,
        description: 'Text to speech and narrated videos, synthesized locally. Errors share one body: see ErrorBody.',
      },
      tags: [
        { name: 'speech', description: 'Synthesis' },
        { name: 'voices', description: 'Voice catalogue' },
        { name: 'assets', description: 'Uploaded images and music' },
        { name: 'jobs', description: 'Asynchronous jobs' },
        { name: 'operations', description: 'Health' },
      ],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  if (localStorage) await app.register(fileServing, { storage: localStorage });

  await app.register(healthRoutes);
  await app.register(voicesRoutes);
  await app.register(ttsRoutes);
  await app.register(ttsVideoRoutes);
  await app.register(jobsRoutes);
  await app.register(assetsRoutes);
  await app.register(openAiRoutes, { prefix: OPENAI_PREFIX });
  await app.register(playgroundRoutes);
  return app;
}

/** Deletes files older than their retention period (generated files, uploaded assets), now and then; 0 keeps them. */
function startRetention(app: FastifyInstance, sweepOld: () => Promise<number>, retentionMs: number): void {
  if (retentionMs <= 0) return;
  const sweep = () =>
    sweepOld().then(
      (removed) => removed > 0 && app.log.info({ removed }, 'old files swept'),
      (err: unknown) => app.log.error({ err }, 'sweeping old files failed'),
    );
  const timer = setInterval(sweep, Math.min(retentionMs / 4, 3_600_000));
  timer.unref();
  app.addHook('onReady', async () => void sweep());
  app.addHook('onClose', async () => clearInterval(timer));
}
