import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { specOf } from '../../jobs/spec.js';
import { answerJob } from '../job-submission.js';
import { ErrorBody } from '../../api/errors.js';
import { JobAccepted } from '../../api/jobs.js';
import { TtsVideoRequest, TtsVideoResponse } from '../../api/video.js';

const ttsVideoRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/tts-video',
    {
      schema: {
        tags: ['speech'],
        summary: 'Text to a narrated video with word-by-word captions',
        body: TtsVideoRequest,
        response: { 200: TtsVideoResponse, 202: JobAccepted, '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    (request, reply) => answerJob(app, request, reply, { operation: 'tts-video', request: specOf(request.body, (id, field) => app.speech.checkVoice(id, field)) }, request.body),
  );
};

export default ttsVideoRoutes;
