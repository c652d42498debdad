import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config.js';
import { VoicePreviews } from '../../speech/voice-previews.js';

declare module 'fastify' {
  interface FastifyInstance {
    previews: VoicePreviews;
  }
}

/** The voices' previews, cached on disk (config.previewsDir: never the bucket's stand-in folder with S3). */
async function voicePreviewsPlugin(app: FastifyInstance, { config }: { config: Config }): Promise<void> {
  const previews = new VoicePreviews(config.previewsDir);
  await previews.init(!config.redisUrl);
  app.decorate('previews', previews);
}

export default fp(voicePreviewsPlugin, { name: 'voice-previews' });
