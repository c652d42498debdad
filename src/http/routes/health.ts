import { enoughSpace } from '../../storage/disk-space.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { answersPing } from '../../jobs/redis/connection.js';

const Health = Type.Object({
  status: Type.String(),
  checks: Type.Optional(Type.Record(Type.String(), Type.Boolean())),
  unavailable: Type.Optional(
    Type.Array(Type.Object({ engine: Type.String(), reason: Type.String() }), {
      description: 'Engines that could not start: their voices are missing from GET /voices until a later try (in the background) starts them.',
    }),
  ),
  warmVoice: Type.Optional(Type.String({ description: 'The voice spoken at start-up (WARM_VOICE) so that the first request is as fast as the next.' })),
  phonemes: Type.Optional(
    Type.String({ description: "How Piper's voices get their phonemes: `espeak-ng native` (the system's eSpeak NG 1.52 or later), else `espeak-ng webassembly`, about 3 times slower." }),
  ),
  onnxruntime: Type.Optional(
    Type.String({ description: "The ONNX Runtime version Piper's voices run on (1.32.0 from PyPI; 1.30.0: onnxruntime-node's, where script/setup did not install 1.32)." }),
  ),
  workers: Type.Optional(
    Type.Integer({
      description: 'With REDIS_URL: `voxreel worker`s alive (heartbeat within 15 s). Reported, not required: with none, jobs wait in the queue.',
    }),
  ),
});

const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', { schema: { tags: ['operations'], summary: 'Alive', response: { 200: Health } } }, async () => ({
    status: 'ok',
  }));

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        summary:
          'Ready: voices, the start-up voice warm, ffmpeg, writable storage, free disk space and (with REDIS_URL) Redis; the H.264 splicer and engines that could not start are reported but not required',
        response: { 200: Health, 503: Health },
      },
    },
    async (_request, reply) => {
      const checks = {
        voices: app.voices.listVoices().length > 0,
        // WARM_VOICE: ready once it has spoken (or failed to: it then loads on its first request).
        warm: app.warmUp.state !== 'warming',
        ffmpeg: await app.ffmpeg.available(),
        outputWritable: await app.storage.writable(),
        diskSpace: await enoughSpace([app.storage.localDir, app.scratch.dir], app.config.minFreeDiskBytes),
        ...(app.redis ? { redis: await answersPing(app.redis) } : {}),
      };
      // Shown but not required: when the splicer fails its start-up self-check, videos are rendered the plain way,
      // slower but the same, so the service is still ready. False too while the check is still running.
      const splicer = app.splicer.passed ?? false;
      const ready = Object.values(checks).every(Boolean);
      const unavailable = app.voices.unavailable();
      const workers = checks.redis ? await app.sharedQueue?.workers().catch(() => undefined) : undefined;
      const piper = await app.voices.piperRuntime();
      return reply.code(ready ? 200 : 503).send({
        status: ready ? 'ok' : 'unavailable',
        checks: { ...checks, splicer },
        ...(unavailable.length > 0 ? { unavailable } : {}),
        ...(app.warmUp.voice ? { warmVoice: app.warmUp.voice } : {}),
        ...piper,
        ...(workers === undefined ? {} : { workers }),
      });
    },
  );
};

export default healthRoutes;
