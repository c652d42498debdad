import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AUDIO_ENCODINGS, type AudioEncoding } from '../../usecases/vocabulary.js';
import { clientId } from '../job-client.js';
import { openAiErrorBody, resolveVoice } from '../openai-compat.js';
import { errorBodyFor, errorResponder, notFoundError } from '../plugins/error-handler.js';
import { sendSpeechStream } from '../speech-stream.js';
import { ModelList, OpenAiErrorBody, SPEECH_MODELS, SpeechRequest, type SpeechFormat } from '../../api/openai.js';

/** OpenAI's rate for every format (its raw `pcm` is defined as 24 kHz). */
const SAMPLE_RATE = 24_000;
const ENCODINGS: Record<SpeechFormat, AudioEncoding> = { mp3: 'mp3', opus: 'opus', aac: 'adts', flac: 'flac', wav: 'wav', pcm: 'pcm' };
/** Listed as the models' creation time. */
const MODELS_CREATED = 1_700_000_000;

const audioContent = Object.fromEntries(
  [...new Set([...Object.values(ENCODINGS).map((encoding) => AUDIO_ENCODINGS[encoding].contentType), 'text/event-stream'])].map((type) => [
    type,
    // Sent as a stream, never serialized.
    { schema: Type.Unsafe<Readable>({ type: 'string', format: 'binary' }) },
  ]),
);

/** OpenAI's speech API under /v1, with OpenAI's error body on every route of it (authentication failures included). */
const openAiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.setErrorHandler(errorResponder((error, _request, thrown) => openAiErrorBody(error, thrown)));
  // ElevenLabs' routes share the prefix: an unknown route under theirs gets their body.
  app.setNotFoundHandler((request, reply) => reply.code(404).send(errorBodyFor(request.url, notFoundError(request), request.id)));

  app.get(
    '/models',
    {
      schema: {
        tags: ['speech'],
        summary: 'OpenAI-compatible: the values `model` accepts',
        response: { 200: ModelList, '4xx': OpenAiErrorBody, '5xx': OpenAiErrorBody },
      },
    },
    async () => ({
      object: 'list' as const,
      data: SPEECH_MODELS.map((id) => ({ id, object: 'model' as const, created: MODELS_CREATED, owned_by: 'voxreel' })),
    }),
  );

  app.post(
    '/audio/speech',
    {
      schema: {
        tags: ['speech'],
        summary: 'OpenAI-compatible: text to audio, streamed as it is synthesized',
        body: SpeechRequest,
        response: {
          200: { description: 'The audio (chunked as it is encoded), or server-sent events with `stream_format: "sse"`.', content: audioContent },
          '4xx': OpenAiErrorBody,
          '5xx': OpenAiErrorBody,
        },
      },
    },
    async (request, reply) => {
      const { input, text_type: textType, voice, response_format = 'mp3', speed = 1, stream_format = 'audio', model } = request.body;
      const voiceId = resolveVoice(app.voices, typeof voice === 'string' ? voice : voice.id);
      const encoding = ENCODINGS[response_format];
      const speech = await app.speech.prepare(clientId(request), {
        text: input,
        textType,
        voice: voiceId,
        lexicons: request.body.lexicons,
        encoding,
        speed,
        sampleRate: SAMPLE_RATE,
      });
      const sse = stream_format === 'sse';
      const event = (data: object) => `data: ${JSON.stringify(data)}\n\n`;
      // voxreel counts characters, not tokens.
      const usage = { input_tokens: input.length, output_tokens: 0, total_tokens: input.length };
      return sendSpeechStream(app, request, reply, {
        speech,
        ...(sse ? { contentType: 'text/event-stream' } : {}),
        facts: { model, voice: voiceId, format: response_format, stream_format, speed, characters: input.length },
        ...(sse
          ? {
              framing: {
                chunk: (chunk) => event({ type: 'speech.audio.delta', audio: chunk.toString('base64') }),
                end: () => event({ type: 'speech.audio.done', usage }),
              },
            }
          : {}),
      });
    },
  );
};

export default openAiRoutes;
