import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { jobClient } from '../job-client.js';
import { roundSeconds, ttsCost } from '../pricing.js';
import { ErrorBody, TtsRequest, TtsResponse } from '../schemas.js';

const ttsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/tts',
    {
      schema: {
        tags: ['speech'],
        summary: 'Text to an audio file',
        body: TtsRequest,
        response: { 200: TtsResponse, '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request) => {
      const { text, voice, format = 'mp3', speed = 1, timestamps = false, loudness = false } = request.body;
      const resolved = app.synthesizer.resolveVoice({ text, voice });
      const result = await app.jobs.run('tts', jobClient(request, text.length), (signal) =>
        app.synthesizer.renderAudio({ text, voice: resolved, encoding: format, speed, timestamps, loudness: loudness === false ? undefined : loudness, signal }),
      );
      request.log.info({ voice, format, speed, loudness, characters: text.length, file: result.file.key }, 'speech stored');
      return {
        status: 'success' as const,
        url: result.file.url,
        duration: roundSeconds(result.duration),
        cost: ttsCost(app.config.pricing, text.length),
        currency: app.config.pricing.currency,
        format,
        voice,
        characters: text.length,
        bytes: result.file.bytes,
        ...(result.words && result.captions
          ? {
              words: result.words.map((word) => ({
                word: text.slice(word.offset, word.offset + word.length),
                start: word.start,
                end: word.end,
                text_offset: word.offset,
                text_length: word.length,
              })),
              captionsUrl: result.captions.vtt.url,
              srtUrl: result.captions.srt.url,
            }
          : {}),
      };
    },
  );
};

export default ttsRoutes;
