import type { Readable } from 'node:stream';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { clientId } from '../job-client.js';
import { ErrorBody } from '../../api/errors.js';
import { VoiceList, VoiceParams, VoicesQuery } from '../../api/voices.js';

/** A preview is only ever replaced by a new file under a new name (the sentence changed), so clients may keep it long. */
const PREVIEW_MAX_AGE = '30d';
/** Previews are made for whoever asks next: a client that leaves does not stop one. */
const NEVER_CANCELLED = new AbortController().signal;

/** Where the voice's preview is: absolute, from the request's own scheme and host (TRUST_PROXY makes them the public ones). */
export function previewUrl(request: FastifyRequest, voiceId: string): string {
  return `${request.protocol}://${request.host}/voices/${encodeURIComponent(voiceId)}/preview`;
}

const voicesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { previews } = app;
  // Only for reply.sendFile (ETag, Last-Modified, ranges, conditional requests): nothing here is served by path.
  await app.register(fastifyStatic, { root: previews.dir, serve: false, dotfiles: 'deny', maxAge: PREVIEW_MAX_AGE });

  app.get(
    '/voices',
    {
      schema: {
        tags: ['voices'],
        summary: 'Voices that /tts and /tts-video accept',
        querystring: VoicesQuery,
        response: { 200: VoiceList, '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request) => {
      const voices = app.voices.listVoices(request.query.language).map((voice) => ({ ...voice, preview_url: previewUrl(request, voice.id) }));
      const unavailable = app.voices.unavailable();
      return { status: 'success' as const, voices, ...(unavailable.length > 0 ? { unavailable } : {}) };
    },
  );

  app.get(
    '/voices/:id/preview',
    {
      schema: {
        tags: ['voices'],
        summary: 'A short MP3 of the voice saying a sentence in its language',
        params: VoiceParams,
        response: {
          200: {
            description: 'MP3, made on the first request and kept; cacheable for 30 days, with an ETag.',
            content: { 'audio/mpeg': { schema: Type.Unsafe<Readable>({ type: 'string', format: 'binary' }) } },
          },
          '4xx': ErrorBody,
          '5xx': ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const voice = app.voices.findVoice(request.params.id);
      if (!voice) throw new AppError('NOT_FOUND', { message: `No voice has the id "${request.params.id.slice(0, 100)}"; GET /voices lists them.` });
      const name = await previews.file(voice, async (text, output) => {
        // Shared by every client: no client's lexicons or partition of the sentence cache.
        const speech = await app.speech.prepare(undefined, { text, voice: voice.id, encoding: 'mp3', speed: 1 });
        await app.speech.stream({ id: clientId(request), signal: NEVER_CANCELLED, characters: text.length }, speech, output, 'tts');
        request.log.info({ voice: voice.id, characters: text.length }, 'voice preview made');
      });
      return reply.sendFile(name, previews.dir);
    },
  );
};

export default voicesRoutes;
