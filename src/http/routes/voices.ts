import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBody, VoiceList, VoicesQuery } from '../schemas.js';

const voicesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/voices',
    {
      schema: {
        tags: ['voices'],
        summary: 'Voices that /tts and /tts-video accept',
        querystring: VoicesQuery,
        response: { 200: VoiceList, 400: ErrorBody },
      },
    },
    async (request) => {
      const wanted = request.query.language?.toLowerCase();
      const voices = app.engines
        .listVoices()
        .filter((voice) => !wanted || voice.language.toLowerCase() === wanted || voice.language.toLowerCase().startsWith(`${wanted}-`));
      return { status: 'success' as const, voices };
    },
  );
};

export default voicesRoutes;
