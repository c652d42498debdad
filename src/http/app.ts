import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fastifyStatic from '@fastify/static';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { FILES_PREFIX, type Config } from '../config.js';
import { createEngines, type EngineRegistry } from '../engines/index.js';
import { Ffmpeg } from '../media/ffmpeg.js';
import { Limiter } from '../jobs/limiter.js';
import { resolveMediaTools, type MediaTools } from '../media/tools.js';
import { JobRunner } from '../jobs/job-runner.js';
import access from './plugins/access.js';
import clientSignal from './plugins/client-signal.js';
import errorHandler from './plugins/error-handler.js';
import metricsPlugin, { Metrics } from './plugins/metrics.js';
import healthRoutes from './routes/health.js';
import openAiRoutes from './routes/openai-speech.js';
import ttsRoutes from './routes/tts.js';
import ttsVideoRoutes from './routes/tts-video.js';
import voicesRoutes from './routes/voices.js';
import { LocalStorage, type Storage } from '../storage/storage.js';
import { Synthesizer } from '../speech/synthesizer.js';
import { version } from '../version.js';

export interface AppDeps {
  engines?: EngineRegistry;
  tools?: MediaTools;
  storage?: Storage;
  logger?: FastifyServerOptions['logger'];
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    engines: EngineRegistry;
    ffmpeg: Ffmpeg;
    storage: Storage;
    synthesizer: Synthesizer;
    limiter: Limiter;
    jobs: JobRunner;
  }
}

/** Builds the whole service as a Fastify instance, ready for `inject` or `listen`; it never listens itself. */
export async function buildApp(config: Config, deps: AppDeps = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel },
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON bodies only: Fastify also parses text/plain by default.
  app.removeContentTypeParser('text/plain');
  // Once closing, in-flight responses end their keep-alive connection, or the server would wait on it.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (closing) reply.header('connection', 'close');
  });

  const localStorage = deps.storage ? undefined : new LocalStorage(config.outputDir, config.cdnUrl);
  await localStorage?.init();
  const storage = deps.storage ?? (localStorage as LocalStorage);
  const engines = deps.engines ?? (await createEngines({ poolSize: config.concurrency, jobTimeoutMs: config.ttsTimeoutMs }));
  const ffmpeg = new Ffmpeg(deps.tools ?? resolveMediaTools());
  app.decorate('config', config);
  app.decorate('engines', engines);
  app.decorate('ffmpeg', ffmpeg);
  app.decorate('storage', storage);
  const synthesizer = new Synthesizer(engines, ffmpeg, storage);
  app.decorate('synthesizer', synthesizer);
  app.addHook('onClose', async () => synthesizer.close());
  const limiter = new Limiter({ concurrency: config.concurrency, queueLength: config.queueLength });
  const metrics = new Metrics(limiter);
  app.decorate('limiter', limiter);
  app.decorate('jobs', new JobRunner(limiter, { tts: config.ttsTimeoutMs, 'tts-video': config.videoTimeoutMs, speech: config.ttsTimeoutMs }, metrics));
  if (!deps.engines) app.addHook('onClose', async () => engines.close());
  startRetention(app, storage, config.retentionMs);

  await app.register(errorHandler);
  await app.register(clientSignal);
  await app.register(access, { config });
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
        { name: 'operations', description: 'Health' },
      ],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  if (localStorage) {
    await app.register(fastifyStatic, {
      root: config.outputDir,
      prefix: `${FILES_PREFIX}/`,
      dotfiles: 'deny',
      index: false,
      list: false,
      // Names are random and never reused, so a cached copy is always right.
      maxAge: '365d',
      immutable: true,
      allowedPath: (pathName) => localStorage.isServable(pathName),
    });
  }

  await app.register(healthRoutes);
  await app.register(voicesRoutes);
  await app.register(ttsRoutes);
  await app.register(ttsVideoRoutes);
  await app.register(openAiRoutes, { prefix: '/v1' });
  return app;
}

/** Deletes generated files older than the retention period, now and then; RETENTION_HOURS=0 keeps them. */
function startRetention(app: FastifyInstance, storage: Storage, retentionMs: number): void {
  if (retentionMs <= 0) return;
  const sweep = () =>
    storage.sweep(retentionMs).then(
      (removed) => removed > 0 && app.log.info({ removed }, 'old files swept'),
      (err: unknown) => app.log.error({ err }, 'sweeping old files failed'),
    );
  const timer = setInterval(sweep, Math.min(retentionMs / 4, 3_600_000));
  timer.unref();
  app.addHook('onReady', async () => void sweep());
  app.addHook('onClose', async () => clearInterval(timer));
}
