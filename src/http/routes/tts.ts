import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { specOf } from '../../jobs/spec.js';
import { answerJob } from '../job-submission.js';
import { ErrorBody } from '../../api/errors.js';
import { JobAccepted } from '../../api/jobs.js';
import { TtsRequest, TtsResponse } from '../../api/speech.js';

const ttsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/tts',
    {
      schema: {
        tags: ['speech'],
        summary: 'Text to an audio file',
        body: TtsRequest,
        response: { 200: TtsResponse, 202: JobAccepted, '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    (request, reply) => answerJob(app, request, reply, { operation: 'tts', request: specOf(request.body, (id, field) => app.speech.checkVoice(id, field)) }, request.body),
  );
};

export default ttsRoutes;
