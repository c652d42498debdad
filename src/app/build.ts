import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { OPENAI_PREFIX, type Config } from '../config.js';
import type { ServiceDeps } from './services.js';
import { version } from '../version.js';
import { deferredCompilers } from '../http/deferred-compilers.js';
import access from '../http/plugins/access.js';
import clientSignal from '../http/plugins/client-signal.js';
import errorHandler from '../http/plugins/error-handler.js';
import fileServing from '../http/plugins/file-serving.js';
import httpEdge, { serverOptions } from '../http/plugins/http-edge.js';
import metricsPlugin from '../http/plugins/metrics.js';
import queue from './plugins/queue.js';
import services from './plugins/services.js';
import useCases from './plugins/usecases.js';
import voicePreviews from './plugins/voice-previews.js';
import work from './plugins/work.js';
import assetsRoutes from '../http/routes/assets.js';
import healthRoutes from '../http/routes/health.js';
import jobsRoutes from '../http/routes/jobs.js';
import lexiconsRoutes from '../http/routes/lexicons.js';
import mcpRoutes from '../http/routes/mcp.js';
import elevenLabsRoutes from '../http/routes/elevenlabs.js';
import openAiRoutes from '../http/routes/openai-speech.js';
import playgroundRoutes from '../http/routes/playground.js';
import ttsRoutes from '../http/routes/tts.js';
import ttsVideoRoutes from '../http/routes/tts-video.js';
import voicesRoutes from '../http/routes/voices.js';
import { parseJsonBodies } from '../http/json-body.js';

export interface AppDeps extends ServiceDeps {
  logger?: FastifyServerOptions['logger'];
  /** A logger made already (the entry point logs the engines' start with it before the app exists). */
  loggerInstance?: FastifyBaseLogger;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
  }
}

/**
 * Builds the whole service as a Fastify instance, ready for `inject` or `listen`; it never listens itself. Each
 * service is a plugin that declares what it decorates the app with and what it needs: work (limits, job slots,
 * metrics) → services (engines, storage, synthesizer, video maker, assets) → queue (the job queue, the request
 * cache, webhooks) → the use cases the front doors call (voices, streamed speech) and voice previews; then the HTTP plugins and the routes.
 */
export async function buildApp(config: Config, deps: AppDeps = {}): Promise<FastifyInstance> {
  const compilers = deferredCompilers();
  const app = Fastify({
    ...(deps.loggerInstance ? { loggerInstance: deps.loggerInstance } : { logger: deps.logger ?? { level: config.logLevel } }),
    bodyLimit: config.bodyLimitBytes,
    ...serverOptions(config),
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    schemaController: { compilersFactory: compilers.factory },
    routerOptions: { ignoreTrailingSlash: true },
    // Opening the services starts the engines, which keep their own start deadlines (a loaded machine is slow).
    pluginTimeout: 0,
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON bodies only: Fastify also parses text/plain by default.
  app.removeContentTypeParser('text/plain');
  parseJsonBodies(app);
  app.decorate('config', config);
  // What no request has compiled yet, once listening and the start-up voice is warm (not to slow its model's load),
  // and only while no request is in progress.
  const inProgress = new Set<object>();
  app.addHook('onRequest', async (request) => void inProgress.add(request));
  app.addHook('onResponse', async (request) => void inProgress.delete(request));
  app.addHook('onRequestAbort', async (request) => void inProgress.delete(request));
  app.addHook('onListen', async () => {
    void app.warmUp.done
      .then(() => compilers.compileRest(() => inProgress.size > 0))
      .catch((err: unknown) => app.log.error({ err }, 'compiling a route schema failed'));
  });
  await app.register(httpEdge, { config });
  await app.register(work, { config });
  await app.register(services, { config, deps });
  await app.register(queue, { config });
  await app.register(useCases);
  await app.register(voicePreviews, { config });

  await app.register(errorHandler);
  await app.register(clientSignal);
  await app.register(access, { config, redis: app.redis });
  await app.register(metricsPlugin);
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
        { name: 'lexicons', description: 'Pronunciation lexicons (W3C PLS 1.0)' },
        { name: 'jobs', description: 'Asynchronous jobs' },
        { name: 'mcp', description: 'Model Context Protocol for AI agents' },
        { name: 'operations', description: 'Health' },
      ],
    },
  });
  // The docs page runs only its own scripts (their hashes), as the playground does; Swagger UI sets inline styles,
  // and a service reached over plain HTTP on a LAN must not have its requests upgraded to HTTPS.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    transformStaticCSP: (header: string) =>
      header
        .replace("style-src 'self' https:", "style-src 'self' 'unsafe-inline'")
        .replace(' validator.swagger.io', '')
        .replace(/ ?upgrade-insecure-requests;/, ''),
  });

  if (app.localStorage) await app.register(fileServing, { storage: app.localStorage });

  await app.register(healthRoutes);
  await app.register(voicesRoutes);
  await app.register(ttsRoutes);
  await app.register(ttsVideoRoutes);
  await app.register(jobsRoutes);
  await app.register(assetsRoutes);
  await app.register(lexiconsRoutes);
  await app.register(mcpRoutes);
  await app.register(openAiRoutes, { prefix: OPENAI_PREFIX });
  // ElevenLabs' API shares the prefix: its routes are its own, but for GET /v1/models (see http/routes/elevenlabs.ts).
  await app.register(elevenLabsRoutes, { prefix: OPENAI_PREFIX });
  await app.register(playgroundRoutes);
  return app;
}
