import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { AUDIO_ENCODINGS, segmentSpans } from '../../usecases/vocabulary.js';
import type { SpeechStreamRequest } from '../../usecases/speech-streams.js';
import { DialogueAlignment, StreamedAlignment, type TimedPart } from '../elevenlabs-alignment.js';
import { ELEVENLABS_ENCODINGS, elevenLabsErrorBody, elevenLabsStatus, elevenLabsVoice, elevenLabsVoices, outputFormat, resolveElevenLabsVoice } from '../elevenlabs-compat.js';
import { clientId } from '../job-client.js';
import { errorResponder } from '../plugins/error-handler.js';
import { sendSpeechStream, type Framing } from '../speech-stream.js';
import { previewUrl } from './voices.js';
import {
  ELEVENLABS_MODELS,
  ElevenLabsDialogueRequest,
  ElevenLabsErrorBody,
  ElevenLabsModelList,
  ElevenLabsSpeechQuery,
  ElevenLabsSpeechRequest,
  ElevenLabsTimedAudio,
  ElevenLabsTimedDialogue,
  ElevenLabsVoiceList,
  ElevenLabsVoiceObject,
  ElevenLabsVoiceParams,
  MAX_ELEVENLABS_TEXT,
} from '../../api/elevenlabs.js';

/** The header ElevenLabs' clients send their key in: GET /v1/models answers in ElevenLabs' shape to requests that carry it. */
const ELEVENLABS_KEY_HEADER = 'xi-api-key';

const errors = { '4xx': ElevenLabsErrorBody, '5xx': ElevenLabsErrorBody };

/** The timed routes' two shapes: one JSON object, or JSON lines as the audio is encoded. */
type TimedKind = 'json' | 'ndjson';
const TIMED_CONTENT_TYPES: Record<TimedKind, string> = { json: 'application/json; charset=utf-8', ndjson: 'application/x-ndjson' };

/** A timed route's answer: `body` as one JSON object, or lines of it (each a piece of the audio and its timing). */
function timedResponse(kind: TimedKind, body: TSchema) {
  if (kind === 'json') return { 200: body, ...errors };
  const fields = Object.keys(body.properties as object).map((name) => `\`${name}\``).join(', ');
  return { 200: { description: `One JSON object a line: ${fields}.`, content: { 'application/x-ndjson': { schema: Type.Unsafe<Readable>({ type: 'string' }) } } }, ...errors };
}
const speechSchema = { tags: ['speech'], params: ElevenLabsVoiceParams, querystring: ElevenLabsSpeechQuery, body: ElevenLabsSpeechRequest };
const audioContent = Object.fromEntries(
  [...new Set(Object.values(ELEVENLABS_ENCODINGS).map((encoding) => AUDIO_ENCODINGS[encoding].contentType))].map((type) => [
    type,
    // Sent as a stream, never serialized.
    { schema: Type.Unsafe<Readable>({ type: 'string', format: 'binary' }) },
  ]),
);

type SpeechCall = FastifyRequest & { params: ElevenLabsVoiceParams; query: ElevenLabsSpeechQuery; body: ElevenLabsSpeechRequest };
type DialogueCall = FastifyRequest & { query: ElevenLabsSpeechQuery; body: ElevenLabsDialogueRequest };
const dialogueSchema = { tags: ['speech'], querystring: ElevenLabsSpeechQuery, body: ElevenLabsDialogueRequest };

/**
 * ElevenLabs' text-to-speech, voices and models under /v1, beside OpenAI's, with ElevenLabs' error body on every route
 * of it (authentication failures included). GET /v1/models is OpenAI's unless the request carries `xi-api-key`.
 */
const elevenLabsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.setErrorHandler(errorResponder((error, _request, thrown) => elevenLabsErrorBody(error, thrown), elevenLabsStatus));
  app.addConstraintStrategy({
    name: 'elevenLabsClient',
    storage() {
      const handlers = new Map<string, never>();
      return { get: (value: string) => handlers.get(value) ?? null, set: (value: string, handler: never) => void handlers.set(value, handler) };
    },
    deriveConstraint: (request) => (request.headers[ELEVENLABS_KEY_HEADER] === undefined ? 'no' : 'yes'),
    mustMatchWhenDerived: false,
  });

  /** What every text-to-speech route checks and resolves before anything is spoken; `onWords` for the timed routes. */
  const prepare = async (request: SpeechCall, onWords?: SpeechStreamRequest['onWords']) => {
    const { text, voice_settings: settings, model_id: model } = request.body;
    const voiceId = resolveElevenLabsVoice(app.voices, request.params.voice_id);
    const format = request.query.output_format ?? 'mp3_44100_128';
    const speed = settings?.speed ?? 1;
    const speech = await app.speech.prepare(clientId(request), { text, voice: voiceId, speed, ...outputFormat(format), onWords });
    return { speech, facts: { model, voice: voiceId, format, speed, characters: text.length } };
  };

  /** A dialogue, each turn's voice mapped as the text-to-speech routes map theirs, spoken as one recording (the speech use case). */
  const prepareDialogue = async (request: DialogueCall, onWords?: SpeechStreamRequest['onWords']) => {
    const { inputs, model_id: model } = request.body;
    const segments = inputs.map((input, index) => ({ voice: resolveElevenLabsVoice(app.voices, input.voice_id, `inputs[${index}].voice_id`), text: input.text }));
    const format = request.query.output_format ?? 'mp3_44100_128';
    const speech = await app.speech.prepare(clientId(request), { segments, field: 'inputs', maxCharacters: MAX_ELEVENLABS_TEXT, speed: 1, ...outputFormat(format), onWords });
    const facts = { model, voices: [...new Set(segments.map((segment) => segment.voice))], turns: segments.length, format, characters: speech.characters };
    return { speech, facts };
  };

  type Reply = Parameters<typeof sendSpeechStream>[2];
  type Prepared = Pick<Parameters<typeof sendSpeechStream>[3], 'speech' | 'facts'>;
  const audioResponse = { 200: { description: 'The audio, chunked as it is encoded.', content: audioContent }, ...errors };

  /**
   * The audio with the time of every character: as one JSON object (/with-timestamps), written as it is encoded (the
   * audio's base64 first, the timing last), never built whole, since an hour of raw PCM is some 460 MB of JSON, past
   * what one string may hold; or as JSON lines (/stream/with-timestamps), each with a piece of audio and the
   * characters said in it. `timing` is told the words as they are said.
   */
  const timed = async (request: FastifyRequest, reply: Reply, kind: TimedKind, timing: Timing, prepared: Prepared) => {
    const { speech, facts } = prepared;
    const framing = kind === 'json' ? timedJson(timing) : timedLines(timing, speech.encoding === 'pcm' ? 2 : 1);
    return sendSpeechStream(app, request, reply, { speech, contentType: TIMED_CONTENT_TYPES[kind], facts, framing });
  };

  for (const [url, summary] of [
    ['/text-to-dialogue', 'ElevenLabs-compatible: a dialogue to audio, each turn in its voice'],
    ['/text-to-dialogue/stream', 'ElevenLabs-compatible: a dialogue to audio, streamed as it is synthesized'],
  ] as const) {
    app.post(url, { schema: { ...dialogueSchema, summary, response: audioResponse } }, async (request, reply) => sendSpeechStream(app, request, reply, await prepareDialogue(request)));
  }

  for (const [url, summary, kind] of [
    ['/text-to-dialogue/with-timestamps', 'ElevenLabs-compatible: a dialogue to audio (base64), the time of every character and each turn\'s voice segment', 'json'],
    ['/text-to-dialogue/stream/with-timestamps', 'ElevenLabs-compatible: a dialogue as JSON lines, each with a piece of audio (base64), the characters and voice segments said in it', 'ndjson'],
  ] as const) {
    app.post(url, { schema: { ...dialogueSchema, summary, response: timedResponse(kind, ElevenLabsTimedDialogue) } }, async (request, reply) => {
      const { inputs } = request.body;
      const alignment = new DialogueAlignment(
        inputs.map((input) => input.voice_id),
        (written) => segmentSpans(inputs, written),
      );
      return timed(request, reply, kind, (final) => alignment.take(final), await prepareDialogue(request, (words, text) => alignment.add(words, text)));
    });
  }

  for (const [url, summary] of [
    ['/text-to-speech/:voice_id', 'ElevenLabs-compatible: text to audio'],
    ['/text-to-speech/:voice_id/stream', 'ElevenLabs-compatible: text to audio, streamed as it is synthesized'],
  ] as const) {
    app.post(url, { schema: { ...speechSchema, summary, response: audioResponse } }, async (request, reply) => sendSpeechStream(app, request, reply, await prepare(request)));
  }

  for (const [url, summary, kind] of [
    ['/text-to-speech/:voice_id/with-timestamps', 'ElevenLabs-compatible: text to audio (base64) with the time of every character', 'json'],
    ['/text-to-speech/:voice_id/stream/with-timestamps', 'ElevenLabs-compatible: JSON lines, each with a piece of audio (base64) and the characters said in it', 'ndjson'],
  ] as const) {
    app.post(url, { schema: { ...speechSchema, summary, response: timedResponse(kind, ElevenLabsTimedAudio) } }, async (request, reply) => {
      const alignment = new StreamedAlignment();
      return timed(request, reply, kind, characterTiming(alignment), await prepare(request, (words, text) => alignment.add(words, text)));
    });
  }

  app.get(
    '/voices',
    { schema: { tags: ['voices'], summary: 'ElevenLabs-compatible: the voices the text-to-speech routes take', response: { 200: ElevenLabsVoiceList, ...errors } } },
    async (request) => ({ voices: elevenLabsVoices(app.voices, (id) => previewUrl(request, id)) }),
  );

  app.get(
    '/voices/:voice_id',
    { schema: { tags: ['voices'], summary: 'ElevenLabs-compatible: one voice', params: ElevenLabsVoiceParams, response: { 200: ElevenLabsVoiceObject, ...errors } } },
    async (request) => elevenLabsVoice(app.voices, request.params.voice_id, (id) => previewUrl(request, id)),
  );

  app.get(
    '/models',
    {
      constraints: { elevenLabsClient: 'yes' },
      schema: {
        tags: ['speech'],
        summary: `ElevenLabs-compatible (with an ${ELEVENLABS_KEY_HEADER} header): the models, all the same local synthesis`,
        response: { 200: ElevenLabsModelList, ...errors },
      },
    },
    async () => {
      const languages = languagesOf(app.voices.listVoices());
      return ELEVENLABS_MODELS.map((id) => ({
        model_id: id,
        name: id,
        description: "voxreel's local synthesis: every model id speaks the same way.",
        can_do_text_to_speech: true,
        can_do_voice_conversion: false,
        can_use_style: false,
        can_use_speaker_boost: false,
        maximum_text_length_per_request: MAX_ELEVENLABS_TEXT,
        languages,
      }));
    },
  );
};

const languageNames = new Intl.DisplayNames(['en'], { type: 'language' });

/** The languages voices here speak, by primary subtag, named in English. */
function languagesOf(voices: ReadonlyArray<{ language: string }>): Array<{ language_id: string; name: string }> {
  const ids = [...new Set(voices.map((voice) => (voice.language.split('-')[0] ?? voice.language).toLowerCase()))].sort();
  return ids.map((id) => ({ language_id: id, name: safeName(id) }));
}

function safeName(id: string): string {
  try {
    return languageNames.of(id) ?? id;
  } catch {
    return id;
  }
}

/** The fields that time a piece of audio: the characters said since the last call (all that is left when `final`). */
type Timing = (final: boolean) => TimedPart;

/** A text's characters as ElevenLabs times them: `alignment`, and `normalized_alignment` the same (the text as written). */
function characterTiming(alignment: StreamedAlignment): Timing {
  return (final) => {
    const part = alignment.take(final);
    return { alignment: part, normalized_alignment: part };
  };
}

/**
 * The audio as ElevenLabs streams it with timestamps: a JSON line for each piece the encoder gives, with the
 * characters timed since the line before (a sentence's as its audio goes to the encoder), the rest in a last line.
 * Each line holds whole samples of `sampleBytes` (raw PCM decodes line by line).
 */
function timedLines(timing: Timing, sampleBytes: number): Framing {
  let carried = Buffer.alloc(0);
  const line = (audio: Buffer, final: boolean) => `${JSON.stringify({ audio_base64: audio.toString('base64'), ...timing(final) })}\n`;
  return {
    chunk: (audio) => {
      const bytes = Buffer.concat([carried, audio]);
      const whole = bytes.length - (bytes.length % sampleBytes);
      carried = bytes.subarray(whole);
      return line(bytes.subarray(0, whole), false);
    },
    end: () => line(carried, true),
  };
}

/**
 * The answer of /with-timestamps as a stream of JSON text, in the shape ElevenLabs' clients parse whole:
 * `{"audio_base64":"…","alignment":{…},"normalized_alignment":{…}}`, the base64 written piece by piece (a piece's
 * last bytes short of three carried to the next, so the pieces join into one base64 string), the characters'
 * times once the last word is said.
 */
function timedJson(timing: Timing): Framing {
  let opened = false;
  let carried = Buffer.alloc(0);
  const open = () => {
    if (opened) return '';
    opened = true;
    return '{"audio_base64":"';
  };
  return {
    chunk: (audio) => {
      const bytes = carried.length === 0 ? audio : Buffer.concat([carried, audio]);
      const whole = bytes.length - (bytes.length % 3);
      carried = Buffer.from(bytes.subarray(whole));
      return open() + bytes.toString('base64', 0, whole);
    },
    // The timing's fields after the audio's: its JSON object without its opening brace.
    end: () => `${open()}${carried.toString('base64')}",${JSON.stringify(timing(true)).slice(1)}`,
  };
}

export default elevenLabsRoutes;
